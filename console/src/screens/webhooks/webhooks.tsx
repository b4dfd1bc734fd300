import type { components } from "@audience-service/client";
import { useQueryClient } from "@tanstack/react-query";
import { type FormEvent, useState } from "react";
import { useApi } from "../../api.tsx";
import { DataTable } from "../../ui/data-table.tsx";
import { ErrorNote } from "../../ui/error-note.tsx";
import { EVENT_TYPES } from "../events/event-types.ts";
import "../tools.css";
import { DeliveryLog } from "./webhook-deliveries.tsx";
import { WebhookEditor } from "./webhook-edit.tsx";

type Webhook = components["schemas"]["Webhook"];
type EventType = components["schemas"]["EventType"];

/**
 * Webhooks: create one (its signing secret shown once), list them with their state (failing,
 * disabled), edit, enable or disable, delete, send a test, read and retry deliveries.
 */
export function WebhooksScreen() {
  const { $api, inWorkspace } = useApi();
  const [logOf, setLogOf] = useState<string | undefined>();
  const [editing, setEditing] = useState<string | undefined>();
  const list = $api.useQuery("get", "/v0/workspaces/{workspaceId}/webhooks", inWorkspace);
  const hooks = list.data?.results ?? [];
  const shown = hooks.find((hook) => hook.id === logOf);
  const edited = hooks.find((hook) => hook.id === editing);
  return (
    <>
      <h1>Webhooks</h1>
      <CreateWebhook />
      <h2 id="webhooks-heading">Endpoints</h2>
      <ErrorNote error={list.error} />
      {list.data && hooks.length === 0 && <p className="muted">No webhooks yet.</p>}
      {hooks.length > 0 && (
        <DataTable
          labelledBy="webhooks-heading"
          columns={["URL", "Events", "State", { label: "Actions", hidden: true }]}
        >
          {hooks.map((hook) => (
            <WebhookRow
              key={hook.id}
              hook={hook}
              open={hook.id === logOf}
              onOpen={() => setLogOf(hook.id)}
              onEdit={() => setEditing(hook.id)}
            />
          ))}
        </DataTable>
      )}
      {edited && <WebhookEditor key={edited.id} webhook={edited} onClose={() => setEditing(undefined)} />}
      {shown && <DeliveryLog key={shown.id} webhook={shown} />}
    </>
  );
}

/** A webhook's state in words: disabled (and why), failing (since when), or enabled. */
function WebhookState({ hook }: { hook: Webhook }) {
  const since = hook.failingSince ? new Date(hook.failingSince).toLocaleString() : undefined;
  if (!hook.enabled) {
    const why = {
      manual: "by hand",
      failing: "after a day of failed deliveries",
      gone: "the receiver answered 410 Gone",
    };
    return (
      <span className="status-failed">
        disabled{hook.disabledReason ? ` (${why[hook.disabledReason]})` : ""}
        {since && <div className="bad">failing since {since}</div>}
      </span>
    );
  }
  if (since) return <span className="status-failed">failing since {since}</span>;
  return <span className="status-succeeded">enabled</span>;
}

function WebhookRow({ hook, open, onOpen, onEdit }: { hook: Webhook; open: boolean; onOpen(): void; onEdit(): void }) {
  const { $api, workspaceId } = useApi();
  const queryClient = useQueryClient();
  const path = { params: { path: { workspaceId, webhookId: hook.id } } };
  const toggle = $api.useMutation("patch", "/v0/workspaces/{workspaceId}/webhooks/{webhookId}");
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
      <td data-label="Events">
        {hook.types ? hook.types.join(", ") : "all events"}
        {hook.audienceIds && <div className="muted">{plural(hook.audienceIds.length, "audience")} only</div>}
      </td>
      <td data-label="State">
        <WebhookState hook={hook} />
      </td>
      <td>
        <div className="row">
          <button type="button" className="quiet" aria-pressed={open} onClick={onOpen}>
            Deliveries<span className="visually-hidden"> to {hook.url}</span>
          </button>
          <button type="button" className="quiet" disabled={test.isPending} onClick={() => test.mutate(path)}>
            Send test<span className="visually-hidden"> to {hook.url}</span>
          </button>
          <button type="button" className="quiet" onClick={onEdit}>
            Edit<span className="visually-hidden"> the webhook to {hook.url}</span>
          </button>
          <button
            type="button"
            className="quiet"
            disabled={toggle.isPending}
            onClick={() => toggle.mutate({ ...path, body: { enabled: !hook.enabled } })}
          >
            {hook.enabled ? "Disable" : "Enable"}
            <span className="visually-hidden"> the webhook to {hook.url}</span>
          </button>
        </div>
        <ErrorNote error={test.error ?? toggle.error} />
      </td>
    </tr>
  );
}

function CreateWebhook() {
  const { $api, inWorkspace } = useApi();
  const queryClient = useQueryClient();
  const [url, setUrl] = useState("");
  const [description, setDescription] = useState("");
  const [types, setTypes] = useState<EventType[]>([]);
  const [created, setCreated] = useState<{ id: string; url: string; secret: string } | undefined>();
  // The screen's own list (the same query, so no second request): a secret is of no use once its
  // webhook is deleted, so its panel goes with it.
  const list = $api.useQuery("get", "/v0/workspaces/{workspaceId}/webhooks", inWorkspace);
  const listed = (id: string) => list.data === undefined || list.data.results.some((hook) => hook.id === id);
  const secretShown = created && listed(created.id) ? created : undefined;
  const create = $api.useMutation("post", "/v0/workspaces/{workspaceId}/webhooks", {
    onSuccess: async (hook) => {
      setCreated({ id: hook.id, url: hook.url, secret: hook.secret });
      setUrl("");
      setDescription("");
      setTypes([]);
      await queryClient.invalidateQueries();
    },
  });
  const submit = (event: FormEvent) => {
    event.preventDefault();
    create.mutate({
      ...inWorkspace,
      body: { url: url.trim(), ...(description ? { description } : {}), ...(types.length > 0 ? { types } : {}) },
    });
  };
  // What the API would refuse anyway is said before sending, and Create waits for a URL it can take.
  const urlProblem =
    url.trim() === "" || /^https?:\/\/\S+$/i.test(url.trim())
      ? undefined
      : "The URL must start with http:// or https://.";
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
            aria-describedby="webhook-url-note webhook-create-error"
            aria-invalid={urlProblem !== undefined}
            onChange={(event) => {
              setUrl(event.target.value);
              create.reset();
            }}
          />
        </div>
        {urlProblem && (
          <p className="error" id="webhook-url-note">
            {urlProblem}
          </p>
        )}
        <div className="inline-form">
          <label htmlFor="webhook-description">Description</label>
          <input
            id="webhook-description"
            value={description}
            maxLength={500}
            placeholder="What receives it (optional)"
            onChange={(event) => setDescription(event.target.value)}
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
        <button type="submit" disabled={create.isPending || url.trim() === "" || urlProblem !== undefined}>
          Create webhook
        </button>
        <ErrorNote id="webhook-create-error" error={create.error} />
      </form>
      {secretShown && (
        <section className="secret" aria-labelledby="secret-heading">
          <h2 id="secret-heading">Signing secret for {secretShown.url}</h2>
          <label htmlFor="new-webhook-secret">Signing secret</label>
          <input id="new-webhook-secret" className="secret-value" readOnly value={secretShown.secret} />
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

const plural = (n: number, word: string) => `${n.toLocaleString()} ${n === 1 ? word : `${word}s`}`;
