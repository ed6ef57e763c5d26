/** Who is calling, as established by the edge (HTTP identity, or the OS user on stdio). */
export interface Caller {
  user: string;
  groups: string[];
  transport: 'http' | 'stdio' | 'system';
  address: string | null;
  /** MCP clientInfo name/version, when the client sent one. */
  client: string | null;
}

/** The actor of events the service itself causes (worker state changes, crash recovery). */
export const SYSTEM_CALLER: Caller = { user: 'system', groups: [], transport: 'system', address: null, client: null };
