import { afterAll, beforeAll } from '@jest/globals';
import { ScriptedOllama } from './scripted-ollama.js';
import { freePort, ServiceProcess, writeConfig, type LaunchOptions } from './service-process.js';

type Sections = Record<string, unknown>;

export interface StackOptions {
  /**
   * agent.yaml sections over writeConfig's defaults; a function when they name the scripted Ollama's URL or the
   * service's own origin (`http://127.0.0.1:<port>`, chosen before the config is written: redirect URIs, a resource
   * URL), or when something they name must be started first (an issuer, a proxy): it may then be async.
   */
  config?: Sections | ((ollamaUrl: string, origin: string) => Sections | Promise<Sections>);
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
    const port = await freePort();
    this.config = await writeConfig(this.ollama.url, typeof config === 'function' ? await config(this.ollama.url, `http://127.0.0.1:${port}`) : config);
    this.service = await new ServiceProcess(this.config.file, this.options.env, this.options.launch).start(port);
    return this;
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
  const stack = new E2eStack(options);
  // The service's start may take long on a loaded machine (ServiceProcess waits up to 60 s): more than Jest's hook time.
  beforeAll(async () => void (await stack.start()), 90_000);
  afterAll(() => stack.stop());
  return stack;
}
