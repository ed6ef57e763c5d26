import { describe, expect, it } from '@jest/globals';
import { ChatModels } from '../../src/chat/chat-models.js';
import { validateConfig } from '../../src/config/agent-config.js';
import { tierModels } from '../../src/ollama/model-tiers.js';

describe('tiers and modes', () => {
  it('reads ollama.models as tiers beside the default, keeping tier names as written', () => {
    const config = validateConfig({ ollama: { model: 'qwen3:8b', models: { high_performance: 'qwen3:32b', fast_1: 'qwen3:1.7b' } } });
    expect([...tierModels(config.ollama)]).toEqual([
      ['default', 'qwen3:8b'],
      ['high_performance', 'qwen3:32b'],
      ['fast_1', 'qwen3:1.7b'],
    ]);
    const refused = (models: unknown) => () => validateConfig({ ollama: { models } });
    expect(refused({ default: 'x' })).toThrow(/ollama\.models: tier names are 1 to 32 lower-case letters/);
    expect(refused({ direct: 'x' })).toThrow(/not default or direct/);
    expect(refused({ 'High-Perf': 'x' })).toThrow(/tier names/);
    expect(refused({ big: '' })).toThrow(/each with a model name/);
    expect(refused(['qwen3:32b'])).toThrow(/expected a mapping of tier names to Ollama models/);
  });

  it('maps Chat model ids and the extension fields to a mode and a tier, refusing what contradicts', () => {
    const models = new ChatModels('ollama-agent', ['default', 'high_performance']);
    expect(models.list.map((model) => model.id)).toEqual(['ollama-agent', 'ollama-agent-direct', 'ollama-agent-high_performance']);
    expect(models.select({ model: 'ollama-agent' })).toEqual({ mode: 'agent', tier: 'default' });
    expect(models.select({ model: 'ollama-agent-direct' })).toEqual({ mode: 'direct', tier: 'default' });
    expect(models.select({ model: 'ollama-agent', agent_mode: false, agent_level: 'high_performance' })).toEqual({ mode: 'direct', tier: 'high_performance' });
    expect(models.select({ model: 'ollama-agent-high_performance', agent_level: 'high_performance' })).toEqual({ mode: 'agent', tier: 'high_performance' });
    expect(() => models.select({ model: 'ollama-agent-high_performance', agent_level: 'default' })).toThrow(/contradicts the model/);
    expect(() => models.select({ model: 'ollama-agent-direct', agent_mode: true })).toThrow(/agent_mode: true contradicts/);
    expect(() => models.select({ model: 'gpt-4o' })).toThrow(/does not exist; GET \/v1\/models lists "ollama-agent", "ollama-agent-direct", "ollama-agent-high_performance"/);
    expect(models.idOf({ mode: 'direct', tier: 'high_performance' })).toBe('ollama-agent-direct');
    expect(models.idOf({ mode: 'agent', tier: 'high_performance' })).toBe('ollama-agent-high_performance');
  });
});
