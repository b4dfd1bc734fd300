/** The Overlap screen (to come). */
export function OverlapScreen() {
  return <h1>Overlap</h1>;
}
