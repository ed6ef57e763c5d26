import { Module } from '@nestjs/common';
import { ConversationModule } from '../conversation/conversation.module.js';
import { A2aEndpoint } from './a2a-endpoint.js';

/** A2A 1.0 (Agent Card, JSON-RPC at /a2a) over the shared TaskQueue; main.ts mounts the endpoint on Express. */
@Module({ imports: [ConversationModule], providers: [A2aEndpoint], exports: [A2aEndpoint] })
export class A2aModule {}
