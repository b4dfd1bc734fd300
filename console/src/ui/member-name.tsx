/**
 * A member as a person reads it: the e-mail address first, the id after it in small muted type
 * (still there to copy, and to tell apart two members that share nothing else). A member without
 * an address is its id.
 */
export function MemberName({ id, email }: { id: string; email: string | null | undefined }) {
  if (!email) return <span>{id}</span>;
  return (
    <span>
      {email} <small className="muted">({id})</small>
    </span>
  );
}
