import { Global, Module } from '@nestjs/common';
import { AnswerDrafts } from './answer-drafts.js';
import { TaskEvents } from './task-events.js';

/**
 * The per-Task event stream and the answer drafts it keeps. Global: runs (the agent, the queue) emit
 * into it and every surface follows it, and neither side should depend on the other's module.
 */
@Global()
@Module({ providers: [TaskEvents, AnswerDrafts], exports: [TaskEvents, AnswerDrafts] })
export class EventsModule {}
