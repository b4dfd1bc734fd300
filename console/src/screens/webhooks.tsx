import type { components } from "@audience-service/client";
import { useQueryClient } from "@tanstack/react-query";
import { type FormEvent, useState } from "react";
import { useApi } from "../api.tsx";
import { ErrorNote } from "../ui/error-note.tsx";
import { EVENT_TYPES } from "./event-types.ts";
import "./tools.css";
import { DeliveryLog } from "./webhook-deliveries.tsx";

type Webhook = components["schemas"]["Webhook"];
type EventType = components["schemas"]["EventType"];

/** Webhooks: create one (its signing secret shown once), list them, send a test, read and retry deliveries. */
export function WebhooksScreen() {
  const { $api, inWorkspace } = useApi();
  const [logOf, setLogOf] = useState<string | undefined>();
  const list = $api.useQuery("get", "/v0/workspaces/{workspaceId}/webhooks", inWorkspace);
  const hooks = list.data?.results ?? [];
  const shown = hooks.find((hook) => hook.id === logOf);
  return (
    <>
      <h1>Webhooks</h1>
      <CreateWebhook />
      <h2 id="webhooks-heading">Endpoints</h2>
      <ErrorNote error={list.error} />
      {list.data && hooks.length === 0 && <p className="muted">No webhooks yet.</p>}
      {hooks.length > 0 && (
        <div className="table-wrap">
          <table aria-labelledby="webhooks-heading" className="stack-table">
            <thead>
              <tr>
                <th scope="col">URL</th>
                <th scope="col">Events</th>
                <th scope="col">State</th>
                <th scope="col">
                  <span className="visually-hidden">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {hooks.map((hook) => (
                <WebhookRow key={hook.id} hook={hook} open={hook.id === logOf} onOpen={() => setLogOf(hook.id)} />
              ))}
            </tbody>
          </table>
        </div>
      )}
      {shown && <DeliveryLog key={shown.id} webhook={shown} />}
    </>
  );
}

function WebhookRow({ hook, open, onOpen }: { hook: Webhook; open: boolean; onOpen(): void }) {
  const { $api, workspaceId } = useApi();
  const queryClient = useQueryClient();
  const test = $api.useMutation("post", "/v0/workspaces/{workspaceId}/webhooks/{webhookId}/test", {
    onSuccess: async () => {
      onOpen();
      await queryClient.invalidateQueries();
    },
  });
  return (
    <tr className={open ? "selected" : ""}>
      <th scope="row">
        <code>{hook.url}</code>
        {hook.description && <div className="muted">{hook.description}</div>}
      </th>
      <td>{hook.types ? hook.types.join(", ") : "all events"}</td>
      <td>
        {hook.enabled ? (
          <span className="status-succeeded">enabled</span>
        ) : (
          <span className="status-failed">disabled ({hook.disabledReason})</span>
        )}
        {hook.failingSince && <div className="bad">failing since {new Date(hook.failingSince).toLocaleString()}</div>}
      </td>
      <td>
        <div className="row">
          <button type="button" className="quiet" aria-pressed={open} onClick={onOpen}>
            Deliveries<span className="visually-hidden"> to {hook.url}</span>
          </button>
          <button
            type="button"
            className="quiet"
            disabled={test.isPending}
            onClick={() => test.mutate({ params: { path: { workspaceId, webhookId: hook.id } } })}
          >
            Send test<span className="visually-hidden"> to {hook.url}</span>
          </button>
        </div>
        <ErrorNote error={test.error} />
      </td>
    </tr>
  );
}

function CreateWebhook() {
  const { $api, inWorkspace } = useApi();
  const queryClient = useQueryClient();
  const [url, setUrl] = useState("");
  const [types, setTypes] = useState<EventType[]>([]);
  const [created, setCreated] = useState<{ url: string; secret: string } | undefined>();
  const create = $api.useMutation("post", "/v0/workspaces/{workspaceId}/webhooks", {
    onSuccess: async (hook) => {
      setCreated({ url: hook.url, secret: hook.secret });
      setUrl("");
      setTypes([]);
      await queryClient.invalidateQueries();
    },
  });
  const submit = (event: FormEvent) => {
    event.preventDefault();
    create.mutate({ ...inWorkspace, body: { url: url.trim(), ...(types.length > 0 ? { types } : {}) } });
  };
  const toggle = (type: EventType, on: boolean) =>
    setTypes((current) => (on ? [...current, type] : current.filter((t) => t !== type)));
  return (
    <>
      <form className="panel" onSubmit={submit} aria-label="Add a webhook">
        <h2>Add a webhook</h2>
        <div className="inline-form">
          <label htmlFor="webhook-url">Endpoint URL</label>
          <input
            id="webhook-url"
            type="url"
            required
            value={url}
            placeholder="https://example.com/hooks/audiences"
            aria-describedby="webhook-create-error"
            onChange={(event) => {
              setUrl(event.target.value);
              create.reset();
            }}
          />
        </div>
        <fieldset>
          <legend>Events (none chosen: every event)</legend>
          <div className="types">
            {EVENT_TYPES.map((type) => (
              <label key={type}>
                <input
                  type="checkbox"
                  checked={types.includes(type)}
                  onChange={(event) => toggle(type, event.target.checked)}
                />
                <code>{type}</code>
              </label>
            ))}
          </div>
        </fieldset>
        <button type="submit" disabled={create.isPending}>
          Create webhook
        </button>
        <ErrorNote id="webhook-create-error" error={create.error} />
      </form>
      {created && (
        <section className="secret" aria-labelledby="secret-heading">
          <h2 id="secret-heading">Signing secret for {created.url}</h2>
          <label htmlFor="new-webhook-secret">Signing secret</label>
          <input id="new-webhook-secret" className="secret-value" readOnly value={created.secret} />
          <p>
            <strong>Copy it now: it will not be shown again.</strong> Your receiver checks every delivery's signature
            with it.
          </p>
          <button type="button" className="quiet" onClick={() => setCreated(undefined)}>
            I have copied the secret
          </button>
        </section>
      )}
    </>
  );
}
