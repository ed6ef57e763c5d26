import { Logger } from '@nestjs/common';
import {
  Client,
  SdkError,
  SdkErrorCode,
  type CallToolResult,
  type CreateMessageRequest,
  type CreateMessageResult,
  type ElicitRequest,
  type ElicitResult,
  type Tool as McpTool,
  type Transport,
} from '@modelcontextprotocol/client';
import { SkillsClient, type Skill, type SkillFile } from '@modelcontextprotocol/client/ext/skills';
import { EventEmitter, once } from 'node:events';
import { setTimeout as delay } from 'node:timers/promises';
import { SERVER_INFO } from '../common/server-info.js';
import { cutText } from '../common/cut-text.js';
import { shownEscaped } from '../common/shown-text.js';
import { CallDeadline } from './call-deadline.js';
import { CallsInFlight, type Root } from './calls-in-flight.js';

/** A server's answer to a sampling request, and what it cost on the Task's model. */
export type Sampler = (request: CreateMessageRequest['params']) => Promise<CreateMessageResult>;

/** The person's answer to a server's form (elicitation). */
export type Elicitor = (request: ElicitRequest['params']) => Promise<ElicitResult>;

/** What the connection answers a server with while one call of a Task runs through it. */
export interface CallScope {
  /** `file://` URIs the server may work in: the session workspace. */
  roots: Root[];
  /** Answers `sampling/createMessage`; absent: refused (the server's `sampling` is not on). */
  sampler?: Sampler;
  /** Answers `elicitation/create`; absent: `decline`. The call's `timeout_ms` does not run while the person is asked. */
  elicitor?: Elicitor;
}

export interface ConnectionOptions {
  name: string;
  /** A fresh transport per (re)connect: a transport starts once. */
  transport: () => Transport;
  sampling: boolean;
  /** Lines the server writes to stderr (stdio only), for the log. */
  stderr?: (transport: Transport) => NodeJS.ReadableStream | null;
  /** Restart after the server dies, with backoff; off for a per-session process that ends with its Task. */
  restart: boolean;
  /** The longest a connect (and its first `tools/list`) may take: the server's `timeout_ms`. */
  timeoutMs: number;
  /** The roots while no call runs: a per-session process's workspace from its start. */
  roots?: Root[];
  /**
   * Why this server cannot be used here at all: a sandbox that does not run (`cannot_start`), or a caller
   * whose identity its headers cannot carry exactly (`identity_unsendable`). It is never tried.
   */
  unavailable?: { kind: 'cannot_start' | 'identity_unsendable'; reason: string } | null;
  /** The current trace context, sent in each call's `_meta` (SEP-414). */
  traceContext?: () => Record<string, string>;
}

/** How much of a server's error text is kept for admins and the log. */
const MAX_ERROR_CHARS = 2000;
const BACKOFF_MS = [500, 1000, 2000, 5000, 10_000, 30_000];
/** The SDK's own request timeout is set out of the way (the longest a timer takes): `CallDeadline` bounds a call. */
const SDK_TIMEOUT_MS = 2_147_483_647;
/** A run's listing tries a server that is down at once, unless it failed this recently. */
const RETRY_AFTER_MS = 1000;
/** The longest a server that reads its roots gets to ask for the new ones before a call goes out. */
const ROOTS_READ_MS = 2000;
/**
 * And to apply them once answered: a server handles our answer and the call that follows concurrently
 * (the filesystem server resolves the new roots on disk first), and MCP has no message that says it is done,
 * so the call goes out this long after the server read them. The only fixed wait left: every other one ends
 * on the event it waits for, or at its deadline.
 */
const ROOTS_APPLY_MS = 100;
/** The longest a new per-session process gets to ask for its roots after connecting. */
const FIRST_ROOTS_READ_MS = 500;

export type ConnectionState = 'connecting' | 'connected' | 'down' | 'stopped';

/**
 * Why a connection is down, as one of a few states we name ourselves: what the model is told is chosen
 * from these, never from the server's own words (an error text is the server's to choose).
 */
export type DownKind = 'cannot_start' | 'identity_unsendable' | 'cannot_connect' | 'timed_out' | 'closed';

/**
 * One MCP client connection to one server through the SDK's `Client` (both protocol eras: it probes
 * `server/discover` and falls back to `initialize`). It lists the server's tools once connected, answers
 * the server's requests for roots, sampling and elicitation, and reconnects with backoff when the
 * server dies; a call while it is down fails at once with the reason.
 */
export class ServerConnection {
  state: ConnectionState = 'connecting';
  /** Why it is down, in words an admin reads (`/admin/mcp-servers`, the log): the server's text escaped. */
  lastError: string | null = null;
  /** Why it is down, as a state of our own: the only thing about a failure the model is told. */
  downKind: DownKind | null = null;
  tools: McpTool[] = [];
  /** The skills the server serves (the skills extension, SEP-2640), listed once connected; none when it does not declare it. */
  skills: Skill[] = [];
  connectedAt: string | null = null;
  /** The protocol version negotiated (`2026-07-28`, or `2025-11-25` and older for a legacy server). */
  protocol: string | null = null;
  private client: Client | null = null;
  private connecting: Promise<void> | null = null;
  private failures = 0;
  private failedAt = 0;
  private timer: NodeJS.Timeout | null = null;
  /** The calls in flight, by id: whose a server's request is, and the roots they share (`followRoots` changes them). */
  private readonly calls = new CallsInFlight<CallScope>((roots) => this.followRoots(roots));
  /** The roots the server was last given (JSON). */
  private sentRoots = '[]';
  /** Whether the server asked for roots at least once, so it will ask again when they change. */
  private readsRoots = false;
  /** `read` each time the server reads the roots. */
  private readonly rootsEvents = new EventEmitter();
  private readonly logger: Logger;

  constructor(private readonly options: ConnectionOptions) {
    this.logger = new Logger(`mcp:${options.name}`);
  }

  /** Connects (once at a time); resolves when connected or failed (`state` and `lastError` say which). */
  connect(): Promise<void> {
    if (this.state === 'stopped') return Promise.resolve();
    this.connecting ??= this.open().finally(() => (this.connecting = null));
    return this.connecting;
  }

  /**
   * Connected now, or after the connect in progress if it ends within `waitMs`; a server in backoff is
   * tried at once. A server that hangs while connecting costs the caller `waitMs`, not the connect's timeout.
   */
  async ready(waitMs: number, { retryRecent = true } = {}): Promise<boolean> {
    // A listing right after a failure (a run lists twice) does not try again; a call always does.
    if (!retryRecent && this.state === 'down' && Date.now() - this.failedAt < RETRY_AFTER_MS) return false;
    if (this.state === 'down' && this.timer) {
      clearTimeout(this.timer);
      this.timer = null;
    }
    if (this.state !== 'connected') {
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([this.connect(), new Promise((resolve) => (timer = setTimeout(resolve, waitMs)))]);
      clearTimeout(timer);
    }
    return this.state === 'connected';
  }

  /**
   * Calls one tool for a Task, beside the other calls in flight (`CallsInFlight`). Roots first follow the Task's
   * workspace (a server that reads roots is told they changed and given time to read them); the SDK sends
   * `notifications/cancelled` for this call alone when its signal aborts or its timeout passes.
   */
  async call(name: string, args: Record<string, unknown>, scope: CallScope, options: { signal: AbortSignal; timeoutMs: number }): Promise<CallToolResult> {
    const client = this.client;
    if (!client || this.state !== 'connected') throw new Error(this.lastError ?? 'not connected');
    const deadline = new CallDeadline(options.timeoutMs);
    const elicitor = scope.elicitor;
    const own: CallScope = { ...scope, ...(elicitor ? { elicitor: (request) => deadline.pausedDuring(() => elicitor(request)) } : {}) };
    const signal = AbortSignal.any([options.signal, deadline.signal]);
    try {
      return await this.calls.run(own, signal, () => {
        const trace = this.options.traceContext?.() ?? {};
        return client.callTool({ name, arguments: args, ...(Object.keys(trace).length > 0 ? { _meta: trace } : {}) }, { signal, timeout: SDK_TIMEOUT_MS });
      });
    } finally {
      deadline.clear();
    }
  }

  /** One file of a skill this server listed, checked against its entry (size, digest, front matter) by the SDK. */
  async readSkill(skill: Skill, ref: string | undefined, options: { signal?: AbortSignal; timeoutMs: number }): Promise<SkillFile> {
    const client = this.client;
    if (!client || this.state !== 'connected') throw new Error(this.lastError ?? 'not connected');
    return new SkillsClient(client).read(skill, ref, { ...(options.signal ? { signal: options.signal } : {}), timeout: options.timeoutMs });
  }

  async stop(): Promise<void> {
    this.state = 'stopped';
    if (this.timer) clearTimeout(this.timer);
    const client = this.client;
    this.client = null;
    await client?.close().catch(() => undefined);
  }

  private async open(): Promise<void> {
    if (this.options.unavailable) {
      this.state = 'down';
      this.lastError = this.options.unavailable.reason;
      this.downKind = this.options.unavailable.kind;
      return;
    }
    this.state = 'connecting';
    const client = new Client(
      { name: SERVER_INFO.name, version: SERVER_INFO.version },
      {
        capabilities: { roots: { listChanged: true }, elicitation: {}, ...(this.options.sampling ? { sampling: {} } : {}) },
        versionNegotiation: { mode: 'auto' },
        // notifications/tools/list_changed: the SDK lists again; the next run's listing offers the new tools
        // (a running Task keeps the tool block it started with: its prompt prefix stays byte-stable).
        listChanged: {
          tools: {
            onChanged: (error, tools) => {
              if (this.client !== client) return;
              if (error || !tools) return this.logger.warn(`tools changed, and listing them again failed: ${shownEscaped(messageOf(error))}`);
              this.tools = tools;
              this.logger.log(`tools changed: ${tools.length} tools`);
            },
          },
        },
      },
    );
    client.setRequestHandler('roots/list', () => {
      this.readsRoots = true;
      // Outside any call the server gets the process's own roots (or none); the next call tells it its own again.
      const roots = this.calls.heldRoots() ?? this.options.roots ?? [];
      this.sentRoots = JSON.stringify(roots);
      this.rootsEvents.emit('read');
      return { roots };
    });
    // The SDK refuses a handler for a capability not declared: sampling is declared only when configured.
    if (this.options.sampling) {
      client.setRequestHandler('sampling/createMessage', (request) => {
        const sampler = this.calls.scopeOfRequest()?.sampler;
        if (!sampler) throw new Error('sampling is only answered during a call of a Task, when it can be told which');
        return sampler(request.params);
      });
    }
    // Outside a call, or where nobody can answer in place, the server is told no and goes on without the answer.
    client.setRequestHandler('elicitation/create', (request) => this.calls.scopeOfRequest()?.elicitor?.(request.params) ?? { action: 'decline' as const });
    // A new server process knows no roots yet (it may ask for them while the connect runs).
    this.sentRoots = JSON.stringify(this.options.roots ?? []);
    this.readsRoots = false;
    const transport = this.options.transport();
    this.pipeStderr(transport);
    const firstRootsRead = this.options.roots ? this.rootsRead(FIRST_ROOTS_READ_MS) : null;
    try {
      const bound = { timeout: this.options.timeoutMs, maxTotalTimeout: this.options.timeoutMs };
      await client.connect(transport, bound);
      this.tools = (await client.listTools(undefined, bound)).tools;
      this.skills = await this.listSkills(client, bound);
      // A process started for one workspace (sandbox: true) gets its roots at once; its first call waits until it applied them.
      if (firstRootsRead) await this.rootsApplied(firstRootsRead);
    } catch (error) {
      await client.close().catch(() => undefined);
      const timedOut = error instanceof SdkError && error.code === SdkErrorCode.RequestTimeout;
      this.down(timedOut ? 'timed_out' : 'cannot_connect', `cannot connect: ${messageOf(error)}`);
      return;
    }
    if (this.stopped()) {
      await client.close().catch(() => undefined);
      return;
    }
    client.onclose = () => {
      if (this.client !== client) return;
      this.client = null;
      this.down('closed', 'the server closed the connection (it stopped or crashed)');
    };
    this.client = client;
    this.state = 'connected';
    this.downKind = null;
    this.connectedAt = new Date().toISOString();
    this.protocol = client.getNegotiatedProtocolVersion() ?? null;
    this.failures = 0;
    this.logger.log(`connected (${client.getNegotiatedProtocolVersion() ?? 'unknown protocol'}), ${this.tools.length} tools`);
  }

  /** A server that lists no skills, or fails to, still serves its tools: skills are an extra. Invalid entries are skipped. */
  private async listSkills(client: Client, bound: { timeout: number; maxTotalTimeout: number }): Promise<Skill[]> {
    const skills = new SkillsClient(client, { skipInvalid: true });
    if (!skills.supported) return [];
    try {
      const listing = await skills.list(undefined, bound);
      for (const invalid of listing.invalid) this.logger.warn(shownEscaped(`skipped skill ${invalid.uri ?? `#${invalid.index}`}: ${invalid.reason}`));
      return listing.skills;
    } catch (error) {
      this.logger.warn(`listing skills failed: ${shownEscaped(messageOf(error))}`);
      return [];
    }
  }

  /** Read through a method: a stop can come in while a connect awaits. */
  private stopped(): boolean {
    return this.state === 'stopped';
  }

  private down(kind: DownKind, reason: string): void {
    if (this.stopped()) return;
    this.state = 'down';
    this.failedAt = Date.now();
    this.downKind = kind;
    this.lastError = cutText(shownEscaped(reason), MAX_ERROR_CHARS, { mark: 'chars' });
    this.logger.warn(this.lastError);
    if (!this.options.restart) return;
    const delay = BACKOFF_MS[Math.min(this.failures++, BACKOFF_MS.length - 1)];
    this.timer = setTimeout(() => {
      this.timer = null;
      void this.connect();
    }, delay);
    this.timer.unref();
  }

  /** Whether the server reads the roots within `withinMs`: the next `read` event, or false at that deadline. */
  private rootsRead(withinMs: number): Promise<boolean> {
    return once(this.rootsEvents, 'read', { signal: AbortSignal.timeout(withinMs) }).then(
      () => true,
      () => false,
    );
  }

  /** Waits for a new server's first roots read (it asks once initialized, if at all), then for it to apply them. */
  private async rootsApplied(firstRead: Promise<boolean>): Promise<void> {
    if (await firstRead) await delay(ROOTS_APPLY_MS);
  }

  /** Gives the server `roots` before the calls under them go out (CallsInFlight runs it once per change). */
  private async followRoots(roots: Root[]): Promise<void> {
    const client = this.client;
    const sent = JSON.stringify(roots);
    if (!client || sent === this.sentRoots) return;
    this.sentRoots = sent;
    if (!this.readsRoots) return;
    const read = this.rootsRead(ROOTS_READ_MS);
    await client.sendRootsListChanged();
    if (await read) await delay(ROOTS_APPLY_MS);
  }

  private pipeStderr(transport: Transport): void {
    const stream = this.options.stderr?.(transport);
    if (!stream) return;
    let rest = '';
    stream.on('data', (chunk: Buffer | string) => {
      const lines = (rest + chunk.toString()).split(/\r?\n/);
      rest = lines.pop()!.slice(-4000);
      // The server's own text: escaped, so that a control sequence in it cannot rewrite the log's lines.
      for (const line of lines) if (line.trim() !== '') this.logger.log(shownEscaped(line.slice(0, 2000)));
    });
  }
}

export const messageOf = (error: unknown) => (error instanceof Error ? error.message : String(error));
