import { useEffect, useRef } from "react";
import {
  COUNT_LABELS,
  type CountOp,
  PROPERTY_OPS,
  type ActivityRow as Row,
  type WhereOp,
  WINDOW_LABELS,
} from "./activity-state.ts";
import { DurationInput } from "./duration-input.tsx";

export interface ActivityTypeOption {
  type: string;
  properties: { key: string; types: string[] }[];
}

export interface ActivityRowProps {
  row: Row;
  /** Its place in the rule as read, from 1 ("Condition 2"), renumbered as rows go. */
  position: number;
  focusOnMount?: boolean;
  /** The workspace's activity types (listActivityTypes), offered by name. */
  activityTypes: ActivityTypeOption[];
  /** The members this condition alone matches; undefined while counting. */
  count: number | undefined;
  error: string | undefined;
  onChange(change: Partial<Omit<Row, "id" | "kind">>): void;
  onRemove(): void;
}

/** One activity condition: did or did not, which activity, how often, when, and one property. */
export function ActivityConditionRow(props: ActivityRowProps) {
  const { row, position, focusOnMount, activityTypes, count, error, onChange, onRemove } = props;
  const name = `Condition ${position}`;
  const typeInput = useRef<HTMLInputElement>(null);
  useEffect(() => {
    if (focusOnMount) typeInput.current?.select();
  }, [focusOnMount]);
  const errorId = `condition-error-${row.id}`;
  const described = error ? { "aria-describedby": errorId, "aria-invalid": true } : {};
  const keys = activityTypes.find((t) => t.type === row.activity)?.properties.map((p) => p.key) ?? [];
  const listId = `activity-properties-${row.id}`;
  return (
    // biome-ignore lint/a11y/useSemanticElements: a group of related controls without a fieldset's border
    <div className="condition activity" role="group" aria-label={name}>
      <select
        aria-label={`${name} did or did not`}
        value={row.did ? "did" : "not"}
        onChange={(event) => onChange({ did: event.target.value === "did" })}
      >
        <option value="did">did</option>
        <option value="not">did not do</option>
      </select>
      <input
        ref={typeInput}
        aria-label={`${name} activity`}
        list="rule-activity-types"
        placeholder="order.placed"
        size={16}
        value={row.activity}
        onChange={(event) => onChange({ activity: event.target.value })}
        {...described}
      />
      <select
        aria-label={`${name} how often`}
        value={row.countOp}
        onChange={(event) => onChange({ countOp: event.target.value as CountOp })}
      >
        {Object.entries(COUNT_LABELS).map(([op, label]) => (
          <option key={op} value={op}>
            {label}
          </option>
        ))}
      </select>
      <input
        aria-label={`${name} times`}
        inputMode="numeric"
        size={4}
        value={row.count}
        onChange={(event) => onChange({ count: event.target.value.trim() })}
        {...described}
      />
      <span>{row.count === "1" ? "time" : "times"}</span>
      <select
        aria-label={`${name} when`}
        value={row.window}
        onChange={(event) => onChange({ window: event.target.value as Row["window"] })}
      >
        {Object.entries(WINDOW_LABELS).map(([window, label]) => (
          <option key={window} value={window}>
            {label}
          </option>
        ))}
      </select>
      {row.window !== "ever" ? (
        <DurationInput
          name={name}
          value={row.duration}
          described={described}
          onChange={(d) => onChange({ duration: d })}
        />
      ) : null}
      <span>where</span>
      <input
        aria-label={`${name} property`}
        list={listId}
        placeholder="any property"
        size={12}
        value={row.property}
        onChange={(event) => onChange({ property: event.target.value })}
      />
      <datalist id={listId}>
        {keys.map((key) => (
          <option key={key} value={key} />
        ))}
      </datalist>
      {row.property.trim() !== "" ? (
        <>
          <select
            aria-label={`${name} property operator`}
            value={row.propertyOp}
            onChange={(event) => onChange({ propertyOp: event.target.value as WhereOp })}
          >
            {Object.entries(PROPERTY_OPS).map(([op, label]) => (
              <option key={op} value={op}>
                {label}
              </option>
            ))}
          </select>
          <input
            aria-label={`${name} property value`}
            size={10}
            value={row.propertyValue}
            onChange={(event) => onChange({ propertyValue: event.target.value })}
            {...described}
          />
        </>
      ) : null}
      <output className="count muted" aria-label={`${name} count`}>
        {count === undefined ? "…" : `${count.toLocaleString()} ${count === 1 ? "member" : "members"}`}
      </output>
      <button type="button" className="quiet" onClick={onRemove}>
        Remove<span className="visually-hidden"> {name.toLowerCase()}</span>
      </button>
      {error && (
        <p className="error" id={errorId} role="alert">
          {error}
        </p>
      )}
    </div>
  );
}
