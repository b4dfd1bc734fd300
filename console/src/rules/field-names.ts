/** The fields the API names itself; any other name in the builder is a custom field's key. */
export const BUILT_IN_FIELDS = ["email", "anyEmail", "id", "createdAt", "audience"];
const CUSTOM = "fields.";

/** A field as the builder shows it: a custom field by its key (plan), unless a built-in has that name. */
export function shownField(field: string): string {
  const key = field.slice(CUSTOM.length);
  return field.startsWith(CUSTOM) && !BUILT_IN_FIELDS.includes(key) ? key : field;
}

/** A field as the API names it: a key shown bare (plan) is the custom field fields.plan. */
export function apiField(field: string): string {
  const name = field.trim();
  return BUILT_IN_FIELDS.includes(name) || name.startsWith(CUSTOM) ? name : `${CUSTOM}${name}`;
}
