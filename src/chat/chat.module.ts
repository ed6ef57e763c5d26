import { Module } from '@nestjs/common';
import { ConversationModule } from '../conversation/conversation.module.js';
import { ChatController } from './chat.controller.js';
import { ChatService } from './chat.service.js';

/** The OpenAI-compatible Chat API (`/v1/models`, `/v1/chat/completions`) over the shared TaskQueue. */
@Module({ imports: [ConversationModule], controllers: [ChatController], providers: [ChatService], exports: [ChatService] })
export class ChatModule {}
