import type { components } from "@audience-service/client";

type FilterWarning = components["schemas"]["FilterWarning"];

/** The API's warnings about a filter (a field no member holds), by the pointer of the node they name. */
export const warningsByPointer = (warnings: FilterWarning[] | undefined): Map<string, string> =>
  new Map((warnings ?? []).map((warning) => [warning.pointer, warning.detail]));

/** The warnings of a rule edited as JSON, where no row stands beside them: each with its place. */
export function WarningList({ warnings }: { warnings: Map<string, string> }) {
  return [...warnings].map(([pointer, detail]) => (
    <p key={pointer} className="warning">
      {detail} <span className="muted">(at {pointer || "the rule"})</span>
    </p>
  ));
}
