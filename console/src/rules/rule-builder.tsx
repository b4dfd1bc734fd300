import { keepPreviousData, useQueryClient } from "@tanstack/react-query";
import { useMemo, useState } from "react";
import { useApi } from "../api.tsx";
import { ErrorNote } from "../ui/error-note.tsx";
import { useUnsavedWarning } from "../ui/unsaved-warning.ts";
import type { ActivityTypeOption } from "./activity-row.tsx";
import { DryRun } from "./dry-run.tsx";
import { WarningList, warningsByPointer } from "./filter-warnings.tsx";
import { RuleConditions } from "./rule-conditions.tsx";
import {
  BUILT_IN_FIELDS,
  draftOf,
  type FieldType,
  type Filter,
  filterOf,
  isComplete,
  pointersOf,
  type RuleDraft,
  rowAtError,
  shownField,
  unfinishedRow,
} from "./rule-state.ts";
import { useDebounced } from "./use-debounced.ts";

/** The rule of an audience: loads the saved rule, then edits it (RuleEditor). */
export function RuleBuilder({ audienceId }: { audienceId: string }) {
  const { $api, workspaceId } = useApi();
  const params = { path: { workspaceId, audienceId } };
  const saved = $api.useQuery("get", "/v0/workspaces/{workspaceId}/audiences/{audienceId}/filter", { params });
  const fields = $api.useQuery("get", "/v0/workspaces/{workspaceId}/fields", { params: { path: { workspaceId } } });
  const audiences = $api.useQuery("get", "/v0/workspaces/{workspaceId}/audiences", {
    params: { path: { workspaceId } },
  });
  // The types members did, with their properties: what an activity condition offers by name.
  const activityTypes = $api.useQuery("get", "/v0/workspaces/{workspaceId}/activity-types", {
    params: { path: { workspaceId } },
  });
  if (saved.error || fields.error || audiences.error)
    return <ErrorNote error={saved.error ?? fields.error ?? audiences.error} />;
  if (!saved.data || !fields.data || !audiences.data) return <p className="muted">Loading the rule…</p>;
  const types = Object.fromEntries(fields.data.results.map((field) => [field.key, field.type]));
  const others = audiences.data.results.filter((audience) => audience.id !== audienceId && !audience.isArchived);
  return (
    // The editor starts from the rule as loaded and keeps its draft while the rule is read again
    // (a save elsewhere does not throw the edits away); another audience starts a new one.
    <RuleEditor
      key={audienceId}
      audienceId={audienceId}
      saved={saved.data.filter}
      types={types}
      audiences={others}
      activityTypes={activityTypes.data?.results ?? []}
      // The catalogue's keys by name (plan), as the builder shows them.
      fieldNames={[...BUILT_IN_FIELDS, ...fields.data.results.map((field) => shownField(`fields.${field.key}`))]}
    />
  );
}

interface EditorProps {
  audienceId: string;
  saved: Filter | null;
  types: Record<string, FieldType>;
  audiences: { id: string; name: string }[];
  activityTypes: ActivityTypeOption[];
  fieldNames: string[];
}

/**
 * The saved rule as the builder would write it, to compare drafts with: a rule of one condition
 * is drawn as "all of" that condition, which is the same rule and must not count as a change.
 */
function savedTextOf(saved: Filter | null, types: Record<string, FieldType>): string {
  const drawn = draftOf(saved);
  return JSON.stringify(drawn ? filterOf(drawn, types) : saved);
}

function parseJson(text: string): Filter | null | undefined {
  try {
    return JSON.parse(text) as Filter | null;
  } catch {
    return undefined;
  }
}

/**
 * The builder: conditions and groups, a live count on each (one preview with nodeCounts, once
 * typing pauses), the +N/−M dry run against the saved rule, and Save. Filters of shapes the
 * builder does not draw are edited as JSON, with the same counts and dry run.
 */
function RuleEditor({ audienceId, saved, types, audiences, activityTypes, fieldNames }: EditorProps) {
  const { $api, workspaceId } = useApi();
  const queryClient = useQueryClient();
  const [draft, setDraft] = useState<RuleDraft | undefined>(() => draftOf(saved));
  const [json, setJson] = useState(() => JSON.stringify(saved, null, 2));
  const [savedText, setSavedText] = useState(() => savedTextOf(saved, types));
  // The condition just added, whose field takes the focus.
  const [added, setAdded] = useState<number | undefined>();
  const filter = draft ? (isComplete(draft, types) ? filterOf(draft, types) : undefined) : parseJson(json);
  const settled = useDebounced(filter, 400);
  const body = settled === undefined ? undefined : { filter: settled };
  const params = { path: { workspaceId, audienceId } };

  const counts = $api.useQuery(
    "post",
    "/v0/workspaces/{workspaceId}/audiences/preview",
    { params: { path: { workspaceId } }, body: { filter: settled ?? { all: [] }, nodeCounts: true, limit: 1 } },
    { enabled: settled !== undefined && settled !== null, placeholderData: keepPreviousData, retry: false },
  );
  const save = $api.useMutation("put", "/v0/workspaces/{workspaceId}/audiences/{audienceId}/filter", {
    onSuccess: (result) => {
      setSavedText(savedTextOf(result.filter, types));
      // The draft becomes the rule as the API stored it (a date typed as 2026-01-31 is kept as
      // 2026-01-31T00:00:00.000Z), so the saved rule is not taken for a change.
      setDraft(draftOf(result.filter));
      setJson(JSON.stringify(result.filter, null, 2));
      setAdded(undefined);
      void queryClient.invalidateQueries();
    },
  });

  const pointers = useMemo(() => (draft ? pointersOf(draft) : new Map<number, string>()), [draft]);
  // Counts are of the rule as drawn, or of none: an unfinished draft, or one not counted yet, shows
  // no count rather than the counts of an earlier state that the rows no longer say.
  const current = filter !== undefined && JSON.stringify(settled) === JSON.stringify(filter);
  const countAt = new Map(
    (counts.isPlaceholderData || !current ? [] : (counts.data?.nodes ?? [])).map((n) => [n.pointer, n.count]),
  );
  // The API's warnings (a field no member holds) beside the conditions they name, as counts are.
  const warnAt = warningsByPointer(counts.isPlaceholderData || !current ? [] : counts.data?.warnings);
  const unfinished = draft && filter === undefined ? unfinishedRow(draft, types) : undefined;
  const problem = (save.error ?? (counts.isPlaceholderData ? undefined : counts.error)) as
    | { errors?: { pointer: string; message: string }[] }
    | undefined;
  const rowErrors = new Map<number, string>();
  const otherErrors: string[] = [];
  for (const error of problem?.errors ?? []) {
    const id = draft ? rowAtError(draft, error.pointer) : undefined;
    if (id === undefined) otherErrors.push(error.message);
    else rowErrors.set(id, [rowErrors.get(id), error.message].filter(Boolean).join("; "));
  }
  const change = (next: RuleDraft) => {
    setDraft(next);
    save.reset();
  };
  const unchanged = JSON.stringify(filter) === savedText;
  useUnsavedWarning(!unchanged, "The rule has changes that are not saved. Leave without saving them?");
  return (
    <section aria-labelledby="rule-heading" className="panel">
      <h2 id="rule-heading">Rule</h2>
      <datalist id="rule-activity-types">
        {activityTypes.map((t) => (
          <option key={t.type} value={t.type} />
        ))}
      </datalist>
      <datalist id="rule-fields">
        {fieldNames.map((name) => (
          <option key={name} value={name} />
        ))}
      </datalist>
      {draft ? (
        <RuleConditions
          draft={draft}
          types={types}
          audiences={audiences}
          activityTypes={activityTypes}
          added={added}
          countAt={countAt}
          pointers={pointers}
          rowErrors={rowErrors}
          warnAt={warnAt}
          onChange={change}
          onAdd={setAdded}
        />
      ) : (
        <>
          <label htmlFor="rule-json">The rule, as JSON (its shape has more than the builder draws)</label>
          <textarea id="rule-json" rows={10} cols={70} value={json} onChange={(e) => setJson(e.target.value)} />
          {parseJson(json) === undefined && <p className="error">Not valid JSON.</p>}
          <WarningList warnings={warnAt} />
        </>
      )}
      {otherErrors.map((message) => (
        <p key={message} className="error" role="alert">
          {message}
        </p>
      ))}
      {!problem?.errors && <ErrorNote error={save.error ?? counts.error} />}
      {unfinished ? (
        <p className="muted" role="status">
          Condition {unfinished.position} is unfinished: finish it (or remove it) to see the counts and what saving
          would do.
        </p>
      ) : (
        <DryRun
          audienceId={audienceId}
          body={current ? body : undefined}
          total={current ? counts.data?.totalCount : undefined}
          unchanged={unchanged}
        />
      )}
      <div className="row">
        {/* aria-disabled, not disabled: the button keeps the focus it has once the rule is saved. */}
        <button
          type="button"
          aria-disabled={filter === undefined || unchanged || save.isPending}
          aria-describedby="rule-save-note"
          onClick={() => {
            if (filter === undefined || unchanged || save.isPending) return;
            save.mutate({ params, body: { filter: filter ?? null } });
          }}
        >
          {save.isPending ? "Saving…" : "Save rule"}
        </button>
        <output id="rule-save-note" className={save.isSuccess && unchanged ? "good" : "muted"} aria-live="polite">
          {save.isSuccess && unchanged
            ? "Saved."
            : filter === undefined && draft
              ? "Finish every condition to save."
              : unchanged
                ? ""
                : "Not saved yet."}
        </output>
      </div>
    </section>
  );
}
