import { MutationCache, QueryClient, QueryClientProvider } from "@tanstack/react-query";
import { useCallback, useEffect, useRef, useState } from "react";
import { Link, Route, Router, Switch, useLocation } from "wouter";
import { ApiProvider, useApi } from "./api.tsx";
import { useFeedRefresh } from "./feed-refresh.ts";
import { AudienceScreen } from "./screens/audience.tsx";
import { AudiencesScreen } from "./screens/audiences.tsx";
import { EventsScreen } from "./screens/events/events.tsx";
import { FieldsScreen } from "./screens/fields.tsx";
import { ImportsScreen } from "./screens/imports.tsx";
import { MembersScreen } from "./screens/members.tsx";
import { OverlapScreen } from "./screens/overlap.tsx";
import { SignIn } from "./screens/sign-in.tsx";
import { WebhooksScreen } from "./screens/webhooks/webhooks.tsx";
import {
  forgetSession,
  keepSession,
  restoreSession,
  type Session,
  type SessionSharing,
  shareSession,
} from "./session.ts";

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
  const sharing = useRef<SessionSharing | undefined>(undefined);
  const signIn = useCallback((next: Session) => {
    keepSession(next, window.sessionStorage);
    setSession(next);
  }, []);
  const forget = useCallback(() => {
    forgetSession(window.sessionStorage);
    queryClient.clear();
    setSession(undefined);
  }, []);
  const signOut = useCallback(() => {
    forget();
    sharing.current?.signedOut();
  }, [forget]);
  // The latest session, for the other tabs that ask for it.
  const current = useRef(session);
  current.current = session;
  useEffect(() => {
    sharing.current = shareSession(() => current.current, signIn, forget);
    return () => sharing.current?.close();
  }, [signIn, forget]);

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

/**
 * After a move to another screen, focus goes to its heading, so a keyboard or screen-reader user
 * starts reading the new screen at its top instead of wherever the old one left focus.
 */
function useFocusHeadingOnNavigation() {
  const [location] = useLocation();
  const previous = useRef(location);
  useEffect(() => {
    if (previous.current === location) return;
    previous.current = location;
    const heading = document.querySelector<HTMLElement>("main h1");
    if (!heading) return;
    heading.tabIndex = -1;
    heading.focus();
  }, [location]);
}

function Shell() {
  const { workspaceId, signOut } = useApi();
  useFeedRefresh();
  useFocusHeadingOnNavigation();
  // A button, not a link to #content: focus moves into the content without changing the address.
  const skip = () => document.getElementById("content")?.focus();
  return (
    <div className="shell">
      <button type="button" className="skip-link" onClick={skip}>
        Skip to content
      </button>
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
      <main id="content" tabIndex={-1}>
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
