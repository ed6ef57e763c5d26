import { Injectable, Logger, type OnApplicationBootstrap } from '@nestjs/common';
import { AppConfig } from '../config/app-config.js';
import { isModelPulled } from '../ollama/model-name.js';
import { OllamaGateway } from '../ollama/ollama.gateway.js';

/**
 * Says at start whether Tasks can run: without it, a service started with no Ollama was silent until
 * a Task failed. It warns with the fix and never blocks start-up (Ollama may come up later).
 */
@Injectable()
export class OllamaStartupCheck implements OnApplicationBootstrap {
  private readonly logger = new Logger('Ollama');

  constructor(
    private readonly ollama: OllamaGateway,
    private readonly config: AppConfig,
  ) {}

  onApplicationBootstrap(): void {
    void this.check();
  }

  async check(): Promise<void> {
    const { host, model } = this.config.ollama;
    let models: string[];
    try {
      models = await this.ollama.models(AbortSignal.timeout(3000));
    } catch (error) {
      this.logger.warn(`${(error as Error).message}; Tasks fail until it is reachable: start it with \`ollama serve\`, or set ollama.host`);
      return;
    }
    if (isModelPulled(models, model)) this.logger.log(`reachable at ${host}, model ${model} present`);
    else this.logger.warn(`model ${model} is not pulled at ${host}; Tasks fail until it is: run \`ollama pull ${model}\` or set ollama.model`);
  }
}
