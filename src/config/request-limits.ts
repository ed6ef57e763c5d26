/**
 * The largest request body `/mcp` accepts: room for the largest image payload as Base64 (4/3 of the
 * bytes) plus 1 MiB for the rest of the request. Here because boot-time validation needs it too.
 */
export const maxRequestBodyBytes = (maxTotalImageBytes: number) => Math.ceil(maxTotalImageBytes / 3) * 4 + 1024 * 1024;
