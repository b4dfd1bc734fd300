import { ActivityConditionRow, type ActivityTypeOption } from "./activity-row.tsx";
import { ConditionRow } from "./condition-row.tsx";
import {
  type FieldType,
  isActivityRow,
  isGroup,
  type Match,
  newActivity,
  newCondition,
  newGroup,
  type Row,
  type RuleDraft,
  removeRow,
  setMatch,
  updateActivity,
  updateRow,
} from "./rule-state.ts";

/**
 * The conditions and groups of a rule the builder draws: each with its live count, its error and
 * its warning by the pointer the API names it with, and the buttons that add to them.
 */
export function RuleConditions(props: {
  draft: RuleDraft;
  types: Record<string, FieldType>;
  audiences: { id: string; name: string }[];
  activityTypes: ActivityTypeOption[];
  /** The condition just added, whose field takes the focus. */
  added: number | undefined;
  countAt: Map<string, number>;
  pointers: Map<number, string>;
  rowErrors: Map<number, string>;
  /** Warnings by pointer (a field no member holds). */
  warnAt: Map<string, string>;
  onChange(next: RuleDraft): void;
  onAdd(id: number): void;
}) {
  const { draft, types, audiences, activityTypes, added, countAt, pointers, rowErrors, warnAt } = props;
  const change = props.onChange;
  const setAdded = props.onAdd;
  const positions = new Map(
    draft.items.flatMap((item) => (isGroup(item) ? item.rows : [item])).map((r, i) => [r.id, i + 1]),
  );
  const addCondition = (groupId?: number) => {
    setAdded(draft.nextId);
    change(newCondition(draft, groupId));
  };
  const addActivity = () => {
    setAdded(draft.nextId);
    change(newActivity(draft, activityTypes[0]?.type));
  };
  const row = (r: Row) =>
    isActivityRow(r) ? (
      <ActivityConditionRow
        key={r.id}
        row={r}
        position={positions.get(r.id) ?? 0}
        focusOnMount={r.id === added}
        activityTypes={activityTypes}
        count={countAt.get(pointers.get(r.id) ?? "-")}
        error={rowErrors.get(r.id)}
        onChange={(c) => change(updateActivity(draft, r.id, c))}
        onRemove={() => change(removeRow(draft, r.id))}
      />
    ) : (
      <ConditionRow
        key={r.id}
        row={r}
        position={positions.get(r.id) ?? 0}
        focusOnMount={r.id === added}
        types={types}
        audiences={audiences}
        count={countAt.get(pointers.get(r.id) ?? "-")}
        error={rowErrors.get(r.id)}
        warning={warnAt.get(pointers.get(r.id) ?? "-")}
        onChange={(c) => change(updateRow(draft, r.id, c, types))}
        onRemove={() => change(removeRow(draft, r.id))}
      />
    );

  return (
    <>
      <MatchPicker label="Members match" match={draft.match} onChange={(m) => change(setMatch(draft, m))} />
      {draft.items.length === 0 && <p className="muted">No conditions: the audience has members by hand only.</p>}
      {draft.items.map((item) =>
        isGroup(item) ? (
          <div key={item.id} className="group">
            <MatchPicker
              label="A group matching"
              match={item.match}
              onChange={(m) => change(setMatch(draft, m, item.id))}
              count={countAt.get(pointers.get(item.id) ?? "-")}
            />
            {item.rows.map(row)}
            <button type="button" className="quiet" onClick={() => addCondition(item.id)}>
              Add a condition to the group
            </button>
          </div>
        ) : (
          row(item)
        ),
      )}
      <div className="row">
        <button type="button" className="quiet" onClick={() => addCondition()}>
          Add a condition
        </button>
        <button type="button" className="quiet" onClick={addActivity}>
          Add an activity condition
        </button>
        <button type="button" className="quiet" onClick={() => change(newGroup(draft))}>
          Add a group
        </button>
      </div>
    </>
  );
}

function MatchPicker(props: { label: string; match: Match; onChange(m: Match): void; count?: number | undefined }) {
  return (
    <div className="row">
      <label>
        {props.label}{" "}
        <select value={props.match} onChange={(event) => props.onChange(event.target.value as Match)}>
          <option value="all">all</option>
          <option value="any">any</option>
        </select>{" "}
        of these conditions
      </label>
      {props.count !== undefined && <span className="muted">{props.count.toLocaleString()} members</span>}
    </div>
  );
}
