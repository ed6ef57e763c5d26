import { Injectable, Logger } from '@nestjs/common';
import { redactUrlCredentials } from '../common/url-credentials.js';
import { AppConfig } from '../config/app-config.js';
import { isModelPulled } from '../ollama/model-name.js';
import { OllamaDiagnosis } from '../ollama/ollama-diagnosis.js';
import { OllamaGateway } from '../ollama/ollama.gateway.js';
import { probeFilePool } from '../workspace/file-pool-probe.js';
import { DatabaseHealthRepository } from './database-health.repository.js';
import { McpToolSources } from '../mcp-client/mcp-tool-sources.js';

export type Dependency = 'database' | 'ollama' | 'files';

export interface Readiness {
  ready: boolean;
  /**
   * Per dependency: null when it is fine, else why not (URLs, model names: for admins and the log only).
   * `mcp_servers` only where a server is `required`: an optional one that is down leaves the service ready.
   */
  reasons: Record<Dependency, string | null> & { mcp_servers?: string | null };
  /** What would still go wrong with a ready Ollama (num_ctx over the trained context, no tools): for admins. */
  warnings: string[];
}

/**
 * Probes what a request needs: the database answers, Ollama answers and has the configured model, and
 * the file thread pool is not wedged (every Task's file tools need it).
 * A reason is logged when it changes (not on every probe: a load balancer polls every few seconds).
 */
@Injectable()
export class ReadinessService {
  private readonly logger = new Logger('Readiness');
  private readonly lastReasons: Record<Dependency, string | null> = { database: null, ollama: null, files: null };

  constructor(
    private readonly database: DatabaseHealthRepository,
    private readonly ollama: OllamaGateway,
    private readonly diagnosis: OllamaDiagnosis,
    private readonly config: AppConfig,
    private readonly mcpServers: McpToolSources,
  ) {}

  async check(): Promise<Readiness> {
    const warnings: string[] = [];
    const [database, ollama, files] = await Promise.all([
      this.probe('database', () => this.database.ping()),
      this.probe('ollama', async () => {
        const models = await this.ollama.models(AbortSignal.timeout(3000));
        const wanted = this.config.ollama.model;
        if (!isModelPulled(models, wanted)) throw new Error(`model ${wanted} is not pulled`);
        const lines = await this.diagnosis.run(AbortSignal.timeout(3000));
        warnings.push(...lines.filter((line) => line.level !== 'ok').map((line) => `${line.name}: ${line.message}`));
      }),
      this.probe('files', () => probeFilePool(this.config.workspace.root)),
    ]);
    const required = Object.values(this.config.agent.mcpServers).some((server) => server.required);
    const down = this.mcpServers.requiredDown();
    const mcp = down.length > 0 ? down.join('; ') : null;
    return {
      ready: database === null && ollama === null && files === null && mcp === null,
      reasons: { database, ollama, files, ...(required ? { mcp_servers: mcp } : {}) },
      warnings,
    };
  }

  private async probe(name: Dependency, probe: () => Promise<void>): Promise<string | null> {
    let reason: string | null = null;
    try {
      await probe();
    } catch (error) {
      reason = redactUrlCredentials((error as Error).message);
    }
    if (reason !== this.lastReasons[name]) {
      if (reason === null) this.logger.log(`${name}: ready again`);
      else this.logger.warn(`${name}: not ready: ${reason}`);
      this.lastReasons[name] = reason;
    }
    return reason;
  }
}

/**
 * The JSON of a readiness answer: per dependency `ok`/`unavailable`, or with `reasons` (admins) `{ok, error}`
 * and the model's warnings under `ollama.warnings` (what `npm run doctor` would flag; still ready).
 */
export function readinessBody({ ready, reasons, warnings }: Readiness, withReasons: boolean) {
  const detailed = (name: string, reason: string | null) => {
    if (reason !== null) return { ok: false, error: reason };
    return name === 'ollama' && warnings.length > 0 ? { ok: true, warnings } : { ok: true };
  };
  const checks = Object.fromEntries(Object.entries(reasons).map(([name, reason]) => [name, withReasons ? detailed(name, reason) : reason === null ? 'ok' : 'unavailable']));
  return { status: ready ? 'ready' : 'not_ready', checks };
}
