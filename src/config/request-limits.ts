/** Room for everything of a request but its images and files: the envelope, the text, the options. */
const REST_OF_REQUEST_BYTES = 1024 * 1024;

/** Bytes as Base64 text: 4 characters for every 3 bytes, rounded up. */
const asBase64 = (bytes: number) => Math.ceil(bytes / 3) * 4;

/**
 * The largest request body each surface accepts, computed once from `mcp.images.max_total_bytes` and
 * `mcp.files.max_bytes`: the largest image payload as Base64, on the Chat API and A2A the attached files
 * too (MCP's agent_run takes images, no files), plus REST_OF_REQUEST_BYTES. A stdio line is an MCP message,
 * so it has /mcp's limit. The boot check (`server.max_buffered_bytes` must hold the largest body) reads
 * `largest` from here too, so the limit a surface enforces and the one the config is checked against
 * cannot drift apart.
 */
export class RequestLimits {
  /** The largest body any surface accepts. */
  readonly largest: number;
  private readonly mcp: number;

  constructor(imageBytes: number, fileBytes: number) {
    this.mcp = asBase64(imageBytes) + REST_OF_REQUEST_BYTES;
    this.largest = asBase64(imageBytes + fileBytes) + REST_OF_REQUEST_BYTES;
  }

  /** From the config's `mcp` section (its shape spelled out: agent-config.ts imports the schema, which imports this). */
  static of({ images, files }: { images: { maxTotalBytes: number }; files: { maxBytes: number } }): RequestLimits {
    return new RequestLimits(images.maxTotalBytes, files.maxBytes);
  }

  /** The limit of one surface's request body (a line, on stdio). */
  bodyBytes(surface: 'mcp-http' | 'stdio' | 'chat' | 'a2a'): number {
    return surface === 'mcp-http' || surface === 'stdio' ? this.mcp : this.largest;
  }
}
