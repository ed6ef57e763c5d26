/**
 * The largest request body a surface accepts: room for the largest image payload as Base64 (4/3 of the
 * bytes), and on the Chat API and A2A for the attached files too, plus 1 MiB for the rest of the
 * request. Here because boot-time validation needs it too.
 */
export const maxRequestBodyBytes = (maxTotalImageBytes: number, maxFileBytes = 0) => Math.ceil((maxTotalImageBytes + maxFileBytes) / 3) * 4 + 1024 * 1024;
