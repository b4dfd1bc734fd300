/** The line feeds in a chunk of a file: how the CLI counts rows as bytes stream past. */
export function countLineEnds(chunk: Uint8Array): number {
  let count = 0;
  for (let at = chunk.indexOf(0x0a); at !== -1; at = chunk.indexOf(0x0a, at + 1)) count++;
  return count;
}
