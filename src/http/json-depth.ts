/**
 * How deep a request may nest. Our own messages need about ten levels (envelope, params, arguments,
 * images, _meta); code that walks a value recursively (the SDK's schema checks, argument summaries,
 * redaction) overflows the stack somewhere past a few thousand, outside any path that answers or
 * audits. Deeper is refused where the body is parsed.
 */
export const MAX_JSON_DEPTH = 64;

/** Whether `value` nests objects/arrays deeper than `limit`; walked without recursion, stopping early. */
export function nestsDeeperThan(value: unknown, limit: number): boolean {
  const stack: { node: object; depth: number }[] = typeof value === 'object' && value !== null ? [{ node: value, depth: 1 }] : [];
  for (let item = stack.pop(); item; item = stack.pop()) {
    if (item.depth > limit) return true;
    for (const child of Array.isArray(item.node) ? item.node : Object.values(item.node)) {
      if (typeof child === 'object' && child !== null) stack.push({ node: child as object, depth: item.depth + 1 });
    }
  }
  return false;
}
