/** The Events screen (to come). */
export function EventsScreen() {
  return <h1>Events</h1>;
}
