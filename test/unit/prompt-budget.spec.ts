import { describe, expect, it } from '@jest/globals';
import { ASK_USER_TOOL, PLAN_TOOL } from '../../src/agent/core-tools.js';
import { PLAN_GUIDANCE, SYSTEM_PROMPT } from '../../src/agent/prompts.js';
import { COMMAND_TOOL, FILE_TOOLS } from '../../src/agent/tool-definitions.js';

describe('the fixed prompt', () => {
  it('stays within 800 tokens with every tool offered (4 characters a token, the scripted Ollama and the bench count)', () => {
    const chars = SYSTEM_PROMPT.length + PLAN_GUIDANCE.length + JSON.stringify([...FILE_TOOLS, COMMAND_TOOL, PLAN_TOOL, ASK_USER_TOOL]).length;
    expect(Math.ceil(chars / 4)).toBeLessThanOrEqual(800);
  });
});
