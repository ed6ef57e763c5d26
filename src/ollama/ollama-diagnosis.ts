import { Injectable } from '@nestjs/common';
import { AppConfig } from '../config/app-config.js';
import { OllamaError } from './ollama-error.js';
import { OllamaGateway } from './ollama.gateway.js';
import { contextWarning, MINIMUM_VERSION, TOOL_MODELS, tooOld } from './ollama-requirements.js';

/** One line of a diagnosis: `ok`, or a `warn`/`fail` whose message says what to do. */
export interface CheckLine {
  name: string;
  level: 'ok' | 'warn' | 'fail';
  message: string;
}

/**
 * What the configured Ollama and model can do for the agent: reachable and new enough, the model
 * pulled, its capabilities (tools, thinking, vision), its trained context against `ollama.num_ctx`.
 * Shared by `npm run doctor`, the boot log and /readyz.
 */
@Injectable()
export class OllamaDiagnosis {
  constructor(
    private readonly ollama: OllamaGateway,
    private readonly config: AppConfig,
  ) {}

  async run(signal: AbortSignal): Promise<CheckLine[]> {
    const { host, model, think, numCtx } = this.config.ollama;
    let version: string;
    try {
      version = await this.ollama.version(signal);
    } catch (error) {
      return [{ name: 'ollama', level: 'fail', message: (error as Error).message }];
    }
    const old = tooOld(version, MINIMUM_VERSION.streamedToolCalls, 'streamed tool calls', host);
    const lines: CheckLine[] = [{ name: 'ollama', level: old ? 'fail' : 'ok', message: old ?? `Ollama ${version} at ${host}` }];
    let facts;
    try {
      facts = await this.ollama.model(signal);
    } catch (error) {
      const notPulled = error instanceof OllamaError && error.kind === 'model_not_found';
      const message = notPulled ? `model ${model} is not pulled at ${host}: run \`ollama pull ${model}\` or set ollama.model` : (error as Error).message;
      return [...lines, { name: 'model', level: 'fail', message }];
    }
    lines.push({ name: 'model', level: 'ok', message: `${model} is pulled` });
    const has = (capability: string) => facts.capabilities.includes(capability);
    const summary = ['tools', 'thinking', 'vision'].map((capability) => `${capability} ${has(capability) ? 'yes' : 'no'}`).join(', ');
    if (!has('tools')) {
      const fix = `models that call tools natively: ${TOOL_MODELS}`;
      lines.push(
        this.config.agent.textTools
          ? { name: 'capabilities', level: 'warn', message: `${summary}: tools go through the text tool protocol (agent.text_tools), less reliable; ${fix}` }
          : { name: 'capabilities', level: 'fail', message: `${summary}: every Task will fail (agent.text_tools is false); use one of ${fix} or set agent.text_tools: true` },
      );
    } else if (!has('thinking') && think !== 'auto' && think !== 'false') {
      lines.push({ name: 'capabilities', level: 'warn', message: `${summary}: ollama.think is ${think} but the model does not think, so think is not sent` });
    } else {
      const thinkTooOld = has('thinking') && think !== 'false' ? tooOld(version, MINIMUM_VERSION.think, 'thinking', host) : null;
      lines.push({ name: 'capabilities', level: thinkTooOld ? 'fail' : 'ok', message: thinkTooOld ?? summary });
    }
    const warning = contextWarning(numCtx, facts.contextLength);
    lines.push(
      warning
        ? { name: 'context', level: 'warn', message: warning }
        : { name: 'context', level: 'ok', message: `ollama.num_ctx ${numCtx}${facts.contextLength ? ` within the trained context of ${facts.contextLength}` : ' (the model does not report its trained context)'}` },
    );
    return lines;
  }
}
