/** The Fields screen (to come). */
export function FieldsScreen() {
  return <h1>Fields</h1>;
}
