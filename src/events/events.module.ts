import { Global, Module } from '@nestjs/common';
import { RunEventSink } from '../agent/core/run-events.js';
import { AnswerDraftRepository } from './answer-draft.repository.js';
import { AnswerDrafts } from './answer-drafts.js';
import { TaskEvents } from './task-events.js';

/**
 * The per-Task event stream and the answer drafts it keeps. Global: runs (the agent, the queue) emit
 * into it and every surface follows it, and neither side should depend on the other's module.
 */
@Global()
@Module({
  providers: [TaskEvents, { provide: RunEventSink, useExisting: TaskEvents }, AnswerDraftRepository, AnswerDrafts],
  exports: [TaskEvents, RunEventSink, AnswerDrafts],
})
export class EventsModule {}
