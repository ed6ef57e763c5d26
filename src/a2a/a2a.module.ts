import { Module } from '@nestjs/common';
import { ConversationModule } from '../conversation/conversation.module.js';
import { PushModule } from '../push/push.module.js';
import { A2aEndpoint } from './a2a-endpoint.js';
import { A2aPushConfigRepository } from './a2a-push-config.repository.js';
import { A2aPushDispatch } from './a2a-push-dispatch.js';

/** A2A 1.0 (Agent Card, JSON-RPC at /a2a) over the shared TaskQueue; main.ts mounts the endpoint on Express. */
@Module({ imports: [ConversationModule, PushModule], providers: [A2aEndpoint, A2aPushConfigRepository, A2aPushDispatch], exports: [A2aEndpoint] })
export class A2aModule {}
