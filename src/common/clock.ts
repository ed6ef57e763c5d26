/** ISO-8601 UTC timestamps with millisecond precision, the format every stored time uses. */
export const nowIso = () => new Date().toISOString();
