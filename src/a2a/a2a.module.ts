import { Module } from '@nestjs/common';
import { ConversationModule } from '../conversation/conversation.module.js';
import { PushModule } from '../push/push.module.js';
import { A2aEndpoint } from './a2a-endpoint.js';
import { A2aPushConfigRepository } from './a2a-push-config.repository.js';
import { A2aPushDispatch } from './a2a-push-dispatch.js';
import { A2aContexts } from './a2a-contexts.js';
import { A2aContextsRepository } from './a2a-contexts.repository.js';
import { SessionsModule } from '../sessions/sessions.module.js';

/** A2A 1.0 (Agent Card, JSON-RPC at /a2a) over the shared TaskQueue; main.ts mounts the endpoint on Express. */
@Module({
  imports: [ConversationModule, PushModule, SessionsModule],
  providers: [A2aEndpoint, A2aPushConfigRepository, A2aPushDispatch, A2aContexts, A2aContextsRepository],
  exports: [A2aEndpoint],
})
export class A2aModule {}
