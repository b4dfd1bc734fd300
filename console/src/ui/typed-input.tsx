import type { components } from "@audience-service/client";

export type FieldType = components["schemas"]["FieldType"];

/**
 * The input for a value of a declared type: true/false for a boolean, a date picker for a date
 * held as a day (a value with a time of day stays text), decimal keys for a number.
 */
export function TypedInput(props: {
  id: string;
  type: FieldType;
  value: string;
  describedBy: string;
  onChange(value: string): void;
}) {
  const { id, type, value, describedBy, onChange } = props;
  if (type === "boolean" && (value === "" || value === "true" || value === "false")) {
    return (
      <select id={id} value={value} aria-describedby={describedBy} onChange={(event) => onChange(event.target.value)}>
        <option value="">(none)</option>
        <option value="true">true</option>
        <option value="false">false</option>
      </select>
    );
  }
  const day = type === "date" && (value === "" || /^\d{4}-\d{2}-\d{2}$/.test(value));
  return (
    <input
      id={id}
      type={day ? "date" : "text"}
      inputMode={type === "number" ? "decimal" : undefined}
      value={value}
      aria-describedby={describedBy}
      onChange={(event) => onChange(event.target.value)}
    />
  );
}
