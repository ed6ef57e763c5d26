import { afterAll, beforeAll } from '@jest/globals';
import { ScriptedOllama } from './scripted-ollama.js';
import { ServiceProcess, writeConfig, type LaunchOptions } from './service-process.js';

export interface StackOptions {
  /** agent.yaml sections over writeConfig's defaults (a function when they name the scripted Ollama's URL). */
  config?: Record<string, unknown> | ((ollamaUrl: string) => Record<string, unknown>);
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
    this.config = await writeConfig(this.ollama.url, typeof config === 'function' ? config(this.ollama.url) : config);
    this.service = await new ServiceProcess(this.config.file, this.options.env, this.options.launch).start();
    return this;
  }

  /** Closes `thing` when the stack stops, before the service; returns it. */
  closeOnStop<T extends Closable>(thing: T): T {
    this.opened.push(thing);
    return thing;
  }

  async stop(): Promise<void> {
    for (const thing of this.opened.splice(0).reverse()) await Promise.resolve(thing.close()).catch(() => undefined);
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
