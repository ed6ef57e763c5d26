import { Injectable } from '@nestjs/common';
import { ChatService } from '../chat/chat.service.js';
import { AppConfig } from '../config/app-config.js';
import { ConversationService } from '../conversation/conversation.service.js';
import type { Caller } from '../identity/caller.js';
import type { PersonLocale } from '../common/person-locale.js';
import type { ConversationOptionsDto, ConversationTaskDto } from './console-conversation.dto.js';

/** The audit action of a request typed in the console (its refusals too). */
export const CONSOLE_REQUEST = 'console.request';

/**
 * The console's conversation view: a request typed there is a Chat API request (the same validation,
 * files, mode and tier, and the same refusals), queued for the signed-in person on the console's surface;
 * a Task is followed with the Chat stream's own chunks, so the console shows what a Chat client does.
 */
@Injectable()
export class ConsoleConversationService {
  constructor(
    private readonly chat: ChatService,
    private readonly conversations: ConversationService,
    private readonly config: AppConfig,
  ) {}

  options(): ConversationOptionsDto {
    return { models: this.chat.modelIds(), fork: this.config.workspace.isolation === 'session' };
  }

  /** Queues the request (a Chat completion request's body); refusals are ChatErrors, audited as CONSOLE_REQUEST. */
  async send(caller: Caller, body: unknown, locale: PersonLocale): Promise<ConversationTaskDto> {
    const { task } = await this.chat.accept(caller, body, locale, { action: CONSOLE_REQUEST, surface: 'console' });
    return { task_id: task.id, session_id: task.sessionId, status: task.status };
  }

  /** The Chat stream's chunks of a Task the caller may see (an admin: anyone's), until it ends; null when there is none. */
  async stream(caller: Caller, taskId: string, signal: AbortSignal, locale: PersonLocale): Promise<AsyncGenerator<object> | null> {
    const task = await this.conversations.read(taskId);
    if (!task || (!caller.admin && task.owner !== caller.user)) return null;
    return this.chat.chunks({ task, stream: true, steered: false, followUp: false }, signal, locale);
  }
}
