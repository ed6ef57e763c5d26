/** The length of the longest common prefix of `a` and `b` (where two versions of a text first differ). */
export function commonPrefix(a: string, b: string): number {
  const max = Math.min(a.length, b.length);
  let index = 0;
  while (index < max && a.charCodeAt(index) === b.charCodeAt(index)) index++;
  return index;
}
