import { Injectable } from '@nestjs/common';
import { AppConfig } from '../config/app-config.js';
import { OllamaError } from './ollama-error.js';
import { OllamaGateway } from './ollama.gateway.js';
import { DEFAULT_TIER, tierModels } from './model-tiers.js';
import { contextWarning, MINIMUM_VERSION, TOOL_MODELS, tooOld } from './ollama-requirements.js';

/** One line of a diagnosis: `ok`, or a `warn`/`fail` whose message says what to do. */
export interface CheckLine {
  name: string;
  level: 'ok' | 'warn' | 'fail';
  message: string;
}

/**
 * What the configured Ollama and models can do for the agent: reachable and new enough, each tier's
 * model pulled, its capabilities (tools, thinking, vision), its trained context against `ollama.num_ctx`.
 * Shared by `npm run doctor`, the boot log and /readyz.
 */
@Injectable()
export class OllamaDiagnosis {
  constructor(
    private readonly ollama: OllamaGateway,
    private readonly config: AppConfig,
  ) {}

  async run(signal: AbortSignal): Promise<CheckLine[]> {
    const { host } = this.config.ollama;
    let version: string;
    try {
      version = await this.ollama.version(signal);
    } catch (error) {
      return [{ name: 'ollama', level: 'fail', message: (error as Error).message }];
    }
    const old = tooOld(version, MINIMUM_VERSION.streamedToolCalls, 'streamed tool calls', host);
    const lines: CheckLine[] = [{ name: 'ollama', level: old ? 'fail' : 'ok', message: old ?? `Ollama ${version} at ${host}` }];
    // Every tier's model, each checked like `ollama.model` (the default tier, whose lines keep their names).
    for (const [tier, model] of tierModels(this.config.ollama)) lines.push(...(await this.modelLines(model, version, signal, tier === DEFAULT_TIER ? '' : ` (tier ${tier})`)));
    return lines;
  }

  private async modelLines(model: string, version: string, signal: AbortSignal, suffix: string): Promise<CheckLine[]> {
    const { host, think, numCtx } = this.config.ollama;
    const lines: CheckLine[] = [];
    let facts;
    try {
      facts = await this.ollama.model(signal, model);
    } catch (error) {
      const notPulled = error instanceof OllamaError && error.kind === 'model_not_found';
      const fix = suffix === '' ? 'set ollama.model' : 'change ollama.models';
      const message = notPulled ? `model ${model} is not pulled at ${host}: run \`ollama pull ${model}\` or ${fix}` : (error as Error).message;
      return [{ name: `model${suffix}`, level: 'fail', message }];
    }
    lines.push({ name: `model${suffix}`, level: 'ok', message: `${model} is pulled` });
    const has = (capability: string) => facts.capabilities.includes(capability);
    const summary = ['tools', 'thinking', 'vision'].map((capability) => `${capability} ${has(capability) ? 'yes' : 'no'}`).join(', ');
    const name = `capabilities${suffix}`;
    if (!has('tools')) {
      const fix = `models that call tools natively: ${TOOL_MODELS}`;
      lines.push(
        this.config.agent.textTools
          ? { name, level: 'warn', message: `${summary}: tools go through the text tool protocol (agent.text_tools), less reliable; ${fix}` }
          : { name, level: 'fail', message: `${summary}: every Task will fail (agent.text_tools is false); use one of ${fix} or set agent.text_tools: true` },
      );
    } else if (!has('thinking') && think !== 'auto' && think !== 'false') {
      lines.push({ name, level: 'warn', message: `${summary}: ollama.think is ${think} but the model does not think, so think is not sent` });
    } else {
      const thinkTooOld = has('thinking') && think !== 'false' ? tooOld(version, MINIMUM_VERSION.think, 'thinking', host) : null;
      lines.push({ name, level: thinkTooOld ? 'fail' : 'ok', message: thinkTooOld ?? summary });
    }
    const warning = contextWarning(numCtx, facts.contextLength);
    lines.push(
      warning
        ? { name: `context${suffix}`, level: 'warn', message: warning }
        : {
            name: `context${suffix}`,
            level: 'ok',
            message: `ollama.num_ctx ${numCtx}${facts.contextLength ? ` within the trained context of ${facts.contextLength}` : ' (the model does not report its trained context)'}`,
          },
    );
    return lines;
  }
}
