import { Injectable } from '@nestjs/common';
import type { AgentTask } from '../agent/agent-runner.js';
import { AppConfig } from '../config/app-config.js';
import { SessionsService } from '../sessions/sessions.service.js';
import type { TaskEntity } from './task.entity.js';
import { TasksRepository } from './tasks.repository.js';

/**
 * What the agent is given to run a claimed Task: its request and images, and the conversation so far
 * (the session's prelude, then its completed earlier turns with how many images each carried).
 */
@Injectable()
export class TaskConversation {
  constructor(
    private readonly tasks: TasksRepository,
    private readonly sessions: SessionsService,
    private readonly config: AppConfig,
  ) {}

  async agentInput(task: TaskEntity): Promise<AgentTask> {
    const [images, prelude, history] = await Promise.all([this.tasks.imageData(task.id), this.sessions.prelude(task.sessionId), this.tasks.history(task.sessionId, task.seq)]);
    const historyImages = await this.tasks.imagesOf(history.map((turn) => turn.id));
    return {
      id: task.id,
      sessionId: task.sessionId,
      owner: task.owner,
      ownerGroups: JSON.parse(task.ownerGroups) as string[],
      ownerEmail: task.ownerEmail,
      client: task.client,
      answersInPlace: task.answersInPlace,
      unattended: task.unattended,
      mode: task.mode,
      tier: task.tier,
      request: task.request,
      budget: task.budget ? (JSON.parse(task.budget) as AgentTask['budget']) : null,
      temperature: task.temperature ?? this.config.ollama.temperature,
      images,
      history: [
        ...prelude,
        ...history.map((turn) => ({
          request: turn.request,
          imageCount: historyImages.filter((image) => image.taskId === turn.id).length,
          answer: turn.result ?? '',
        })),
      ],
    };
  }
}
