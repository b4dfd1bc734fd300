import { MutationCache, QueryClient, QueryClientProvider } from "@tanstack/react-query";
import { useCallback, useState } from "react";
import { Link, Route, Router, Switch } from "wouter";
import { ApiProvider, useApi } from "./api.tsx";
import { useFeedRefresh } from "./feed-refresh.ts";
import { AudienceScreen } from "./screens/audience.tsx";
import { AudiencesScreen } from "./screens/audiences.tsx";
import { EventsScreen } from "./screens/events.tsx";
import { FieldsScreen } from "./screens/fields.tsx";
import { ImportsScreen } from "./screens/imports.tsx";
import { MembersScreen } from "./screens/members.tsx";
import { OverlapScreen } from "./screens/overlap.tsx";
import { SignIn } from "./screens/sign-in.tsx";
import { WebhooksScreen } from "./screens/webhooks.tsx";
import { forgetSession, keepSession, restoreSession, type Session } from "./session.ts";

const queryClient: QueryClient = new QueryClient({
  // After each write the console made, what is on screen is read again at once; changes made
  // elsewhere (other clients, rules, the clock) arrive through the feed (useFeedRefresh).
  mutationCache: new MutationCache({ onSuccess: () => queryClient.invalidateQueries() }),
  defaultOptions: {
    // The feed tells the console when data changed (useFeedRefresh); no refetch on every focus.
    queries: { retry: 1, refetchOnWindowFocus: false, staleTime: 30_000 },
  },
});

const SECTIONS = [
  ["/", "Audiences"],
  ["/overlap", "Overlap"],
  ["/members", "Members"],
  ["/fields", "Fields"],
  ["/imports", "Imports"],
  ["/webhooks", "Webhooks"],
  ["/events", "Events"],
] as const;

export function App() {
  const [session, setSession] = useState<Session | undefined>(() =>
    restoreSession(window.location, window.sessionStorage, (url) => window.history.replaceState(null, "", url)),
  );
  const signIn = useCallback((next: Session) => {
    keepSession(next, window.sessionStorage);
    setSession(next);
  }, []);
  const signOut = useCallback(() => {
    forgetSession(window.sessionStorage);
    queryClient.clear();
    setSession(undefined);
  }, []);

  return (
    <QueryClientProvider client={queryClient}>
      <Router base="/console">
        {session ? (
          <ApiProvider session={session} signOut={signOut}>
            <Shell />
          </ApiProvider>
        ) : (
          <SignIn onSignIn={signIn} />
        )}
      </Router>
    </QueryClientProvider>
  );
}

function Shell() {
  const { workspaceId, signOut } = useApi();
  useFeedRefresh();
  return (
    <div className="shell">
      <header className="top">
        <span className="brand">Audience Service</span>
        <nav aria-label="Sections">
          {SECTIONS.map(([href, label]) => (
            <Link key={href} href={href} className={(active) => (active ? "active" : "")}>
              {label}
            </Link>
          ))}
        </nav>
        <span className="workspace" title="Workspace">
          {workspaceId}
        </span>
        <button type="button" className="quiet" onClick={signOut}>
          Sign out
        </button>
      </header>
      <main>
        <Switch>
          <Route path="/" component={AudiencesScreen} />
          <Route path="/audiences/:id">{(params) => <AudienceScreen id={params.id} />}</Route>
          <Route path="/overlap" component={OverlapScreen} />
          <Route path="/members" component={MembersScreen} />
          <Route path="/fields" component={FieldsScreen} />
          <Route path="/imports" component={ImportsScreen} />
          <Route path="/webhooks" component={WebhooksScreen} />
          <Route path="/events" component={EventsScreen} />
          <Route>
            <p>
              Nothing here. <Link href="/">Back to the audiences</Link>
            </p>
          </Route>
        </Switch>
      </main>
    </div>
  );
}
