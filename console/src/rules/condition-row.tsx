import { useEffect, useRef } from "react";
import { DurationInput } from "./duration-input.tsx";
import { type FieldType, kindOf, OP_LABELS, OPS, type Op, type ConditionRow as Row, valueShape } from "./rule-state.ts";

export interface ConditionRowProps {
  row: Row;
  /** Its place in the rule as read, from 1: screen readers name it "Condition 2" by this, renumbered as rows go. */
  position: number;
  /** Focus its field when it appears (a condition just added). */
  focusOnMount?: boolean;
  types: Record<string, FieldType>;
  audiences: { id: string; name: string }[];
  /** The members this condition alone matches (the live count); undefined while counting. */
  count: number | undefined;
  error: string | undefined;
  /** What the API warns of about it (a field no member holds); shown while there is no error. */
  warning?: string | undefined;
  onChange(change: Partial<Omit<Row, "id">>): void;
  onRemove(): void;
}

/** One condition: field, operator and value, with its own live count and its own error. */
export function ConditionRow(props: ConditionRowProps) {
  const { row, position, focusOnMount, types, audiences, count, error, warning, onChange, onRemove } = props;
  const kind = kindOf(row.field, types);
  const shape = valueShape(row.op, kind);
  const name = `Condition ${position}`;
  const fieldInput = useRef<HTMLInputElement>(null);
  useEffect(() => {
    // Selected as well as focused: what is typed replaces the default field.
    if (focusOnMount) fieldInput.current?.select();
  }, [focusOnMount]);
  const errorId = `condition-error-${row.id}`;
  const warningId = `condition-warning-${row.id}`;
  const described = error
    ? { "aria-describedby": errorId, "aria-invalid": true }
    : warning
      ? { "aria-describedby": warningId }
      : {};
  const [from = "", to = ""] = row.value.split(",").map((part) => part.trim());
  return (
    // biome-ignore lint/a11y/useSemanticElements: a group of related controls without a fieldset's border
    <div className="condition" role="group" aria-label={name}>
      <input
        ref={fieldInput}
        aria-label={`${name} field`}
        list="rule-fields"
        value={row.field}
        size={16}
        onChange={(event) => onChange({ field: event.target.value })}
        {...described}
      />
      <select
        aria-label={`${name} operator`}
        value={row.op}
        onChange={(event) => {
          // A value that still fits the new operator (is → is not) is kept.
          const op = event.target.value as Op;
          onChange(valueShape(op, kind) === shape ? { op } : { op, value: "" });
        }}
      >
        {OPS[kind].map((op) => (
          <option key={op} value={op}>
            {OP_LABELS[op]}
          </option>
        ))}
      </select>
      {shape === "one" && kind === "boolean" ? (
        <select
          aria-label={`${name} value`}
          value={row.value}
          onChange={(event) => onChange({ value: event.target.value })}
          {...described}
        >
          <option value="">Choose…</option>
          <option value="true">true</option>
          <option value="false">false</option>
        </select>
      ) : null}
      {shape === "one" && isDateKind(kind) ? (
        <input
          aria-label={`${name} value`}
          type={asDate(row.value)}
          value={dayOf(row.value)}
          onChange={(event) => onChange({ value: event.target.value })}
          {...described}
        />
      ) : null}
      {(shape === "one" && kind !== "boolean" && !isDateKind(kind)) || shape === "list" ? (
        <input
          aria-label={`${name} value`}
          value={row.value}
          inputMode={kind === "number" ? "decimal" : undefined}
          placeholder={placeholder(kind, shape === "list")}
          onChange={(event) => onChange({ value: event.target.value })}
          {...described}
        />
      ) : null}
      {shape === "pair" ? (
        <>
          <input
            aria-label={`${name} from`}
            type={isDateKind(kind) ? asDate(from) : undefined}
            value={isDateKind(kind) ? dayOf(from) : from}
            placeholder={placeholder(kind, false)}
            onChange={(event) => onChange({ value: `${event.target.value}, ${to}` })}
            {...described}
          />
          <span>and</span>
          <input
            aria-label={`${name} to`}
            type={isDateKind(kind) ? asDate(to) : undefined}
            value={isDateKind(kind) ? dayOf(to) : to}
            placeholder={placeholder(kind, false)}
            onChange={(event) => onChange({ value: `${from}, ${event.target.value}` })}
            {...described}
          />
        </>
      ) : null}
      {shape === "duration" ? (
        <DurationInput name={name} value={row.value} described={described} onChange={(d) => onChange({ value: d })} />
      ) : null}
      {shape === "audience" ? (
        <select
          aria-label={`${name} audience`}
          value={row.value}
          onChange={(event) => onChange({ value: event.target.value })}
          {...described}
        >
          <option value="">Choose an audience…</option>
          {audiences.map((audience) => (
            <option key={audience.id} value={audience.id}>
              {audience.name}
            </option>
          ))}
        </select>
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
      {warning && !error && (
        <p className="warning" id={warningId}>
          {warning}
        </p>
      )}
    </div>
  );
}

const isDateKind = (kind: string) => kind === "date" || kind === "createdAt";

/**
 * A date picker for a date, or while none is typed yet; a value with a time of day (from a saved
 * rule or the API) stays a text box, which a date picker could not show.
 */
const asDate = (value: string) => (value === "" || /^\d{4}-\d{2}-\d{2}$/.test(dayOf(value)) ? "date" : "text");

/** A date the API stored as midnight UTC (2026-01-31T00:00:00.000Z) shows as the day it was typed as. */
const dayOf = (value: string) => value.replace(/^(\d{4}-\d{2}-\d{2})T00:00:00(\.000)?Z$/, "$1");

function placeholder(kind: string, list: boolean): string {
  const one = kind === "number" ? "50" : kind === "date" || kind === "createdAt" ? "2026-11-30" : "text";
  return list ? `${one}, …` : one;
}
