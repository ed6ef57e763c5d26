import { Injectable, Logger, type OnApplicationBootstrap } from '@nestjs/common';
import { OllamaDiagnosis } from '../ollama/ollama-diagnosis.js';

const CHECK_MS = 5000;

/**
 * Says at start whether Tasks can run and what will go wrong with the model (not pulled, no tools,
 * num_ctx over its trained context): without it, a service started with no Ollama was silent until a
 * Task failed. The lines are `npm run doctor`'s, each warning with its fix; it never blocks start-up
 * (Ollama may come up later).
 */
@Injectable()
export class OllamaStartupCheck implements OnApplicationBootstrap {
  private readonly logger = new Logger('Ollama');

  constructor(private readonly diagnosis: OllamaDiagnosis) {}

  onApplicationBootstrap(): void {
    void this.check();
  }

  async check(): Promise<void> {
    for (const line of await this.diagnosis.run(AbortSignal.timeout(CHECK_MS))) {
      if (line.level === 'ok') this.logger.log(`${line.name}: ${line.message}`);
      // A failure's message is a sentence with its fix; what it means for Tasks follows as another one.
      else this.logger.warn(`${line.name}: ${line.level === 'fail' ? `${line.message.replace(/[.;\s]*$/, '.')} Tasks fail until this is fixed.` : line.message}`);
    }
  }
}
