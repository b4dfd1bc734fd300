import { useApi } from "../api.tsx";
import { Sparkline } from "./sparkline.tsx";

const DAYS = 30;

/** An audience's size at the end of each of the last 30 days, from its history. */
export function SizeSparkline({ audienceId, name }: { audienceId: string; name: string }) {
  const { $api, workspaceId } = useApi();
  // Rounded to the hour, so that the query's key (and the cache) stays the same between renders.
  const from = new Date(Math.floor(Date.now() / 3_600_000) * 3_600_000 - DAYS * 86_400_000).toISOString();
  const history = $api.useQuery("get", "/v0/workspaces/{workspaceId}/audiences/{audienceId}/history", {
    params: { path: { workspaceId, audienceId }, query: { interval: "day", from } },
  });
  if (!history.data) return <span className="muted">…</span>;
  return <Sparkline values={history.data.results.map((row) => row.memberCount)} label={`Size of ${name}`} />;
}
