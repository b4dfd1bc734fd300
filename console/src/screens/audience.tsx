/** One audience (to come). */
export function AudienceScreen({ id }: { id: string }) {
  return <h1>{id}</h1>;
}
