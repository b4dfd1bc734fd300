import type { components } from "@audience-service/client";
import { useQueryClient } from "@tanstack/react-query";
import { useEffect, useState } from "react";
import { useApi } from "../../api.tsx";
import { DataTable } from "../../ui/data-table.tsx";
import { ErrorNote } from "../../ui/error-note.tsx";
import { FIRST_PAGE, Pager } from "../../ui/pager.tsx";

type Webhook = components["schemas"]["Webhook"];
type Delivery = components["schemas"]["WebhookDelivery"];

const PAGE_SIZE = 20;
/** While a delivery is pending, the log is looked at again this often (deliveries are not feed events). */
const POLL_MS = 1_000;

/** A webhook's deliveries, most recent first, a page at a time; a failed or pending one can be retried now. */
export function DeliveryLog({ webhook }: { webhook: Webhook }) {
  const { $api, workspaceId } = useApi();
  const [page, setPage] = useState(FIRST_PAGE);
  const log = $api.useQuery(
    "get",
    "/v0/workspaces/{workspaceId}/webhooks/{webhookId}/deliveries",
    {
      params: {
        path: { workspaceId, webhookId: webhook.id },
        query: { limit: PAGE_SIZE, ...(page.after ? { after: page.after } : {}) },
      },
    },
    {
      staleTime: 0,
      refetchInterval: (query) =>
        query.state.data?.results.some((delivery) => delivery.status === "pending") ? POLL_MS : false,
    },
  );
  const deliveries = log.data?.results ?? [];
  const queryClient = useQueryClient();
  const read = deliveries.length > 0 ? log.dataUpdatedAt : 0;
  useEffect(() => {
    // Each attempt can change its webhook's state (failing since…, even while the delivery is
    // still pending its next attempt). An attempt is counted when the deliverer claims it and its
    // outcome, with the webhook's state, is recorded when it ends: the list of webhooks is read
    // again on every read of the log, not only when the count moves, or the state the outcome
    // records would wait an hour for the next attempt.
    if (read) void queryClient.invalidateQueries({ queryKey: ["get", "/v0/workspaces/{workspaceId}/webhooks"] });
  }, [read, queryClient]);
  return (
    <section className="panel" aria-labelledby="deliveries-heading">
      <h2 id="deliveries-heading">Deliveries to {webhook.url}</h2>
      <ErrorNote error={log.error} />
      {log.isPending && <p className="muted">Loading…</p>}
      {log.data && deliveries.length === 0 && <p className="muted">No deliveries yet. Send a test to see one here.</p>}
      {deliveries.length > 0 && (
        <DataTable
          labelledBy="deliveries-heading"
          columns={[
            "Queued",
            "Event",
            "Status",
            { label: "Attempts", numeric: true },
            "Last answer",
            { label: "Actions", hidden: true },
          ]}
        >
          {deliveries.map((delivery) => (
            <DeliveryRow key={delivery.id} webhookId={webhook.id} delivery={delivery} />
          ))}
        </DataTable>
      )}
      <Pager
        label="Delivery pages"
        page={page}
        hasNextPage={log.data?.pageInfo.hasNextPage ?? false}
        endCursor={log.data?.pageInfo.endCursor}
        onChange={setPage}
      />
    </section>
  );
}

function lastAnswer(delivery: Delivery): string {
  if (delivery.attempts === 0) return "not tried yet";
  const parts = [
    delivery.lastStatusCode === null ? undefined : `HTTP ${delivery.lastStatusCode}`,
    delivery.lastError ?? undefined,
  ].filter(Boolean);
  return parts.length > 0 ? parts.join(" — ") : "no answer";
}

function DeliveryRow({ webhookId, delivery }: { webhookId: string; delivery: Delivery }) {
  const { $api, workspaceId } = useApi();
  const queryClient = useQueryClient();
  const retry = $api.useMutation(
    "post",
    "/v0/workspaces/{workspaceId}/webhooks/{webhookId}/deliveries/{deliveryId}/retry",
    {
      onSuccess: () => queryClient.invalidateQueries(),
    },
  );
  const queued = new Date(delivery.createdAt).toLocaleString();
  return (
    <tr>
      <td data-label="Queued">{queued}</td>
      <td data-label="Event">
        <code>{delivery.eventType}</code>
      </td>
      <td data-label="Status" className={`status-${delivery.status}`}>
        {delivery.status}
        {delivery.status === "pending" && delivery.nextAttemptAt && (
          <div className="muted">next {new Date(delivery.nextAttemptAt).toLocaleTimeString()}</div>
        )}
      </td>
      <td data-label="Attempts" className="num">
        {delivery.attempts}
      </td>
      <td data-label="Last answer">{lastAnswer(delivery)}</td>
      <td>
        {delivery.status !== "succeeded" && (
          // A failed delivery starts a new round of retries; a pending one is tried now instead of at its next time.
          <button
            type="button"
            className="quiet"
            disabled={retry.isPending}
            onClick={() => retry.mutate({ params: { path: { workspaceId, webhookId, deliveryId: delivery.id } } })}
          >
            {delivery.status === "failed" ? "Retry" : "Retry now"}
            <span className="visually-hidden">
              {" "}
              {delivery.eventType} queued {queued}
            </span>
          </button>
        )}
        <ErrorNote error={retry.error} />
      </td>
    </tr>
  );
}
