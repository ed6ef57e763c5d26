import { Injectable } from '@nestjs/common';
import type { Message } from 'ollama';
import { AppConfig } from '../config/app-config.js';
import { OllamaError } from '../ollama/ollama-error.js';
import { OllamaGateway } from '../ollama/ollama.gateway.js';
import type { TaskProgress } from '../queue/tasks.repository.js';
import { AgentFailure, AgentRunner, type AgentOutcome, type AgentTask } from './agent-runner.js';

export const DIRECT_CHAT_STEP = 'ollama chat';

/** The minimal agent: one direct chat per Task, with the session's earlier turns as context. */
@Injectable()
export class DirectChatAgent extends AgentRunner {
  constructor(
    private readonly ollama: OllamaGateway,
    private readonly config: AppConfig,
  ) {
    super();
  }

  async run(task: AgentTask, report: (progress: TaskProgress) => Promise<void>, signal: AbortSignal): Promise<AgentOutcome> {
    try {
      if (task.images.length > 0) await this.requireVision(signal);
      await report({ status: 'running', currentTask: DIRECT_CHAT_STEP, completedSubtasks: 0, totalSubtasks: 1 });
      const reply = await this.ollama.chat({ messages: conversation(task), temperature: task.temperature, signal });
      return {
        result: reply.content,
        progress: {
          completedSubtasks: 1,
          totalSubtasks: 1,
          inputTokens: reply.promptEvalCount,
          outputTokens: reply.evalCount,
        },
      };
    } catch (error) {
      if (error instanceof OllamaError && error.kind !== 'aborted') throw new AgentFailure(error.message);
      throw error;
    }
  }

  /** Checked before any chat call: an image Task on a text-only model fails without spending tokens. */
  private async requireVision(signal: AbortSignal): Promise<void> {
    const capabilities = await this.ollama.capabilities(signal);
    if (!capabilities.includes('vision')) {
      throw new AgentFailure(
        `The model "${this.config.ollama.model}" does not support image input (capabilities: ${capabilities.join(', ') || 'none'}).`,
      );
    }
  }
}

function conversation(task: AgentTask): Message[] {
  const messages: Message[] = [];
  for (const turn of task.history) {
    const note = turn.imageCount > 0 ? `\n\n[${turn.imageCount} image(s) were attached to this message]` : '';
    messages.push({ role: 'user', content: turn.request + note }, { role: 'assistant', content: turn.answer });
  }
  const current: Message = { role: 'user', content: task.request };
  if (task.images.length > 0) current.images = task.images.map((image) => image.dataBase64);
  messages.push(current);
  return messages;
}
