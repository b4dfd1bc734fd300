import type { components } from "@audience-service/client";
import { type FormEvent, useState } from "react";
import { useApi } from "../../api.tsx";
import { ErrorNote } from "../../ui/error-note.tsx";
import { EVENT_TYPES } from "../events/event-types.ts";

type Webhook = components["schemas"]["Webhook"];
type EventType = components["schemas"]["EventType"];

/** The contract's limit on a webhook's description (WebhookDescription). */
const DESCRIPTION_MAX = 500;
const sameSet = (a: readonly string[], b: readonly string[]) => a.length === b.length && a.every((x) => b.includes(x));

/**
 * One webhook changed by hand: its URL, description, event types and audiences (none chosen:
 * everything); or deleted, after a second click that says what goes with it.
 */
export function WebhookEditor({ webhook, onClose }: { webhook: Webhook; onClose(): void }) {
  const { $api, workspaceId } = useApi();
  const path = { params: { path: { workspaceId, webhookId: webhook.id } } };
  const [url, setUrl] = useState(webhook.url);
  const [description, setDescription] = useState(webhook.description);
  const [types, setTypes] = useState<EventType[]>(webhook.types ?? []);
  const [audienceIds, setAudienceIds] = useState<string[]>(webhook.audienceIds ?? []);
  const [confirming, setConfirming] = useState(false);
  const audiences = $api.useQuery("get", "/v0/workspaces/{workspaceId}/audiences", {
    params: { path: { workspaceId }, query: { limit: 100 } },
  });
  const update = $api.useMutation("patch", "/v0/workspaces/{workspaceId}/webhooks/{webhookId}", {
    onSuccess: onClose,
  });
  const remove = $api.useMutation("delete", "/v0/workspaces/{workspaceId}/webhooks/{webhookId}", {
    onSuccess: onClose,
  });
  const changes = {
    ...(url.trim() !== webhook.url ? { url: url.trim() } : {}),
    ...(description !== webhook.description ? { description } : {}),
    ...(sameSet(types, webhook.types ?? []) ? {} : { types: types.length > 0 ? types : null }),
    ...(sameSet(audienceIds, webhook.audienceIds ?? [])
      ? {}
      : { audienceIds: audienceIds.length > 0 ? audienceIds : null }),
  };
  const urlProblem = /^https?:\/\/\S+$/i.test(url.trim()) ? undefined : "The URL must start with http:// or https://.";
  const tooLong = description.length > DESCRIPTION_MAX;
  const submit = (event: FormEvent) => {
    event.preventDefault();
    update.mutate({ ...path, body: changes });
  };
  const toggle = <T,>(list: T[], item: T, on: boolean) => (on ? [...list, item] : list.filter((x) => x !== item));
  const known = audiences.data?.results ?? [];
  // A chosen audience not on the first page (or archived since) stays chosen, shown by id.
  const shown = [
    ...known,
    ...audienceIds.filter((id) => !known.some((a) => a.id === id)).map((id) => ({ id, name: id })),
  ];
  return (
    <section className="panel" aria-labelledby="webhook-edit-heading">
      <h2 id="webhook-edit-heading">Edit the webhook to {webhook.url}</h2>
      <form onSubmit={submit} aria-label={`Edit the webhook to ${webhook.url}`}>
        <div className="inline-form">
          <label htmlFor="edit-webhook-url">Endpoint URL</label>
          <input
            id="edit-webhook-url"
            type="url"
            value={url}
            aria-describedby="edit-webhook-url-note"
            aria-invalid={urlProblem !== undefined}
            onChange={(event) => setUrl(event.target.value)}
          />
        </div>
        {urlProblem && (
          <p className="error" id="edit-webhook-url-note">
            {urlProblem}
          </p>
        )}
        <div className="inline-form">
          <label htmlFor="edit-webhook-description">Description</label>
          <input
            id="edit-webhook-description"
            value={description}
            aria-describedby="edit-webhook-description-note"
            aria-invalid={tooLong}
            onChange={(event) => setDescription(event.target.value)}
          />
        </div>
        <p id="edit-webhook-description-note" className={tooLong ? "error" : "muted"}>
          {description.length.toLocaleString()} of {DESCRIPTION_MAX} characters
        </p>
        <fieldset>
          <legend>Events (none chosen: every event)</legend>
          <div className="types">
            {EVENT_TYPES.map((type) => (
              <label key={type}>
                <input
                  type="checkbox"
                  checked={types.includes(type)}
                  onChange={(event) => setTypes(toggle(types, type, event.target.checked))}
                />
                <code>{type}</code>
              </label>
            ))}
          </div>
        </fieldset>
        <fieldset>
          <legend>Audiences (none chosen: events about every audience, and members' events)</legend>
          <ErrorNote error={audiences.error} />
          <div className="types">
            {shown.map((audience) => (
              <label key={audience.id}>
                <input
                  type="checkbox"
                  checked={audienceIds.includes(audience.id)}
                  onChange={(event) => setAudienceIds(toggle(audienceIds, audience.id, event.target.checked))}
                />
                {audience.name}
              </label>
            ))}
          </div>
        </fieldset>
        <div className="row">
          <button
            type="submit"
            disabled={Object.keys(changes).length === 0 || urlProblem !== undefined || tooLong || update.isPending}
          >
            Save changes
          </button>
          <button type="button" className="quiet" onClick={onClose}>
            Cancel
          </button>
        </div>
        <ErrorNote error={update.error} />
      </form>
      <div className="row">
        {confirming ? (
          <>
            <span role="status">Delete this webhook and its pending deliveries?</span>
            <button type="button" className="danger" disabled={remove.isPending} onClick={() => remove.mutate(path)}>
              Yes, delete it
            </button>
            <button type="button" className="quiet" onClick={() => setConfirming(false)}>
              Keep it
            </button>
          </>
        ) : (
          <button type="button" className="quiet" onClick={() => setConfirming(true)}>
            Delete webhook<span className="visually-hidden"> to {webhook.url}</span>
          </button>
        )}
      </div>
      <ErrorNote error={remove.error} />
    </section>
  );
}
