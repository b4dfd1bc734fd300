import type { ReactNode } from "react";

/**
 * A column of a DataTable: its heading as text, or its heading's text kept for screen readers
 * only (a column of buttons), or drawn by `header` (a checkbox that selects the page), with
 * `label` still naming the column.
 */
export type Column = string | { label: string; numeric?: boolean; hidden?: boolean; header?: ReactNode };

/**
 * A list screen's table: scrolls sideways where it must (table-wrap) and stacks its cells on a
 * narrow screen (stack-table). Named by a visible heading (`labelledBy`) or by `label`.
 */
export function DataTable(props: {
  columns: Column[];
  label?: string;
  labelledBy?: string;
  className?: string;
  children: ReactNode;
}) {
  return (
    <div className="table-wrap">
      <table
        className={["stack-table", props.className].filter(Boolean).join(" ")}
        aria-label={props.label}
        aria-labelledby={props.labelledBy}
      >
        <thead>
          <tr>
            {props.columns.map((column) => {
              const { label, numeric, hidden, header } = typeof column === "string" ? { label: column } : column;
              return (
                <th key={label} scope="col" className={numeric ? "num" : undefined}>
                  {header ?? (hidden ? <span className="visually-hidden">{label}</span> : label)}
                </th>
              );
            })}
          </tr>
        </thead>
        <tbody>{props.children}</tbody>
      </table>
    </div>
  );
}
