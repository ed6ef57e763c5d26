import { describe, expect, it } from '@jest/globals';
import { ConsoleConversationService } from '../../src/admin/console-conversation.service.js';
import type { ChatService } from '../../src/chat/chat.service.js';
import type { AppConfig } from '../../src/config/app-config.js';
import type { ConversationService } from '../../src/conversation/conversation.service.js';

describe('the console conversation view’s options', () => {
  const options = (isolation: 'session' | 'shared') =>
    new ConsoleConversationService(
      { modelIds: () => ['ollama-agent', 'ollama-agent-large'] } as unknown as ChatService,
      {} as ConversationService,
      {
        workspace: { isolation },
      } as AppConfig,
    ).options();

  it('offers Fork only where forking works (workspace.isolation: session), and the tiers default first', () => {
    expect(options('session')).toEqual({ models: ['ollama-agent', 'ollama-agent-large'], fork: true });
    expect(options('shared').fork).toBe(false);
  });
});
