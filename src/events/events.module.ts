import { Global, Module } from '@nestjs/common';
import { AgentModule } from '../agent/agent.module.js';
import { AnswerDraftRepository } from './answer-draft.repository.js';
import { AnswerDrafts } from './answer-drafts.js';
import { TaskEvents } from './task-events.js';

/**
 * The per-Task event stream and the answer drafts it keeps, fed by the agent core's RunEventHub.
 * Global: every surface follows it.
 */
@Global()
@Module({
  imports: [AgentModule],
  providers: [TaskEvents, AnswerDraftRepository, AnswerDrafts],
  exports: [TaskEvents, AnswerDrafts],
})
export class EventsModule {}
