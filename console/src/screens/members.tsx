/** The Members screen (to come). */
export function MembersScreen() {
  return <h1>Members</h1>;
}
