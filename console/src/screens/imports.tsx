/** The Imports screen (to come). */
export function ImportsScreen() {
  return <h1>Imports</h1>;
}
