import { afterAll, beforeAll } from '@jest/globals';
import type { Client } from '@modelcontextprotocol/client';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { modernClient } from './mcp-clients.js';
import { ScriptedOllama } from './scripted-ollama.js';
import { freePort, ServiceProcess, writeConfig, type LaunchOptions } from './service-process.js';

type Sections = Record<string, unknown>;

export interface StackOptions {
  /**
   * agent.yaml sections over writeConfig's defaults; a function when they name the scripted Ollama's URL or the
   * service's own origin (`http://127.0.0.1:<port>`, chosen before the config is written: redirect URIs, a resource
   * URL), or when something they name must be started first (an issuer, a proxy): it may then be async. `dir` is
   * the stack's folder (for history.dir, say).
   */
  config?: Sections | ((ollamaUrl: string, origin: string, dir: string) => Sections | Promise<Sections>);
  /** The folder of agent.yaml, the SQLite file and the workspace, for a file that puts something there first (a template); default a fresh temporary one. */
  dir?: string;
  /** false: start no HTTP service, for a file that runs the built service its own way (stdio, npm start) on the stack's Ollama and config. */
  service?: false;
  /** Environment of the service process, on top of PATH, NO_COLOR, AGENT_CONFIG and the port. */
  env?: Record<string, string>;
  launch?: LaunchOptions;
  /** Set up the scripted Ollama (models, capabilities, version) before the service starts and asks it. */
  ollama?: (ollama: ScriptedOllama) => void;
}

/** Something a test opened against the service (an MCP client, a socket) that must go before the service does. */
interface Closable {
  close(): unknown;
}

/**
 * What almost every e2e file needs: a scripted Ollama, an agent.yaml on a fresh database of the suite's kind
 * (OAM_TEST_DB) pointing at it, and the built service started on a free port.
 */
export class E2eStack {
  readonly ollama = new ScriptedOllama();
  config!: Awaited<ReturnType<typeof writeConfig>>;
  service!: ServiceProcess;
  private readonly opened: Closable[] = [];
  private readonly others: ServiceProcess[] = [];

  constructor(private readonly options: StackOptions = {}) {}

  /** `http://127.0.0.1:<port>`, the service's origin. */
  get base(): string {
    return `http://127.0.0.1:${this.service.port}`;
  }

  get database() {
    return this.config.database;
  }

  async start(): Promise<this> {
    this.options.ollama?.(this.ollama);
    await this.ollama.start();
    const { config = {} } = this.options;
    // The port is chosen before agent.yaml is written (a config may name the service's origin), so another process
    // of the parallel suite can take it before the service binds it: then the stack starts again on another port.
    for (let attempt = 1; ; attempt++) {
      const port = await freePort();
      const dir = this.options.dir ?? mkdtempSync(join(tmpdir(), 'oam-'));
      this.config = await writeConfig(this.ollama.url, typeof config === 'function' ? await config(this.ollama.url, `http://127.0.0.1:${port}`, dir) : config, dir);
      this.service = new ServiceProcess(this.config.file, this.options.env, this.options.launch);
      if (this.options.service === false) return this;
      try {
        await this.service.start(port);
        return this;
      } catch (error) {
        if (!this.service.lostItsPort || attempt === 3) throw error;
      }
    }
  }

  /**
   * Another service process on this stack's agent.yaml, so on the same database and workspace: a second replica,
   * or the same configuration started with `env` on top of the stack's (AGENT__… keys override the file). Started on
   * a port of its own; stopped with the stack.
   */
  async startAnotherService(env: Record<string, string> = {}): Promise<ServiceProcess> {
    const service = new ServiceProcess(this.config.file, { ...this.options.env, ...env }, this.options.launch);
    this.others.push(service);
    return service.start();
  }

  /** A pinned 2026-07-28 MCP client of the service (`headers`: e.g. a proxy identity), closed when the stack stops. */
  async mcpClient(headers: Record<string, string> = {}): Promise<Client> {
    return this.closeOnStop(await modernClient(this.service.url, headers));
  }

  /** Closes `thing` when the stack stops, before the service; returns it. */
  closeOnStop<T extends Closable>(thing: T): T {
    this.opened.push(thing);
    return thing;
  }

  async stop(): Promise<void> {
    for (const thing of this.opened.splice(0).reverse()) await Promise.resolve(thing.close()).catch(() => undefined);
    for (const other of this.others.splice(0)) await other.stop();
    await this.service?.stop();
    await this.ollama.stop();
  }
}

/** One stack for the enclosing describe block: started in its beforeAll, stopped in its afterAll. */
export function useStack(options: StackOptions = {}): E2eStack {
  return useStackInstance(new E2eStack(options));
}

/** useStack for a stack built by the caller (a subclass such as ProxiedStack). */
export function useStackInstance<T extends E2eStack>(stack: T): T {
  // The service's start may take long on a loaded machine (ServiceProcess waits up to 60 s): more than Jest's hook time.
  beforeAll(async () => void (await stack.start()), 90_000);
  afterAll(() => stack.stop());
  return stack;
}
