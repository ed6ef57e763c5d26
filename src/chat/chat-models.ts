import { DEFAULT_TIER } from '../ollama/model-tiers.js';
import { ChatInputError } from './chat-request.js';

export interface ChatModel {
  id: string;
  mode: 'agent' | 'direct';
  tier: string;
}

/**
 * The model ids `GET /v1/models` lists: `chat.model_id` (the agent on the default tier), `<id>-direct`
 * (one answer, no tools: for clients that cannot send `agent_mode: false`) and `<id>-<tier>` for each
 * tier of `ollama.models`. A request names one, and may choose with `agent_mode` / `agent_level` instead.
 */
export class ChatModels {
  readonly list: ChatModel[];

  constructor(
    private readonly baseId: string,
    private readonly tiers: string[],
  ) {
    this.list = [
      { id: baseId, mode: 'agent', tier: DEFAULT_TIER },
      { id: `${baseId}-direct`, mode: 'direct', tier: DEFAULT_TIER },
      ...tiers.filter((tier) => tier !== DEFAULT_TIER).map((tier) => ({ id: `${baseId}-${tier}`, mode: 'agent' as const, tier })),
    ];
  }

  /** The mode and tier a request asks for; a 400 for an unknown id or tier, or fields that contradict its id. */
  select(fields: Record<string, unknown>): Omit<ChatModel, 'id'> {
    const model = this.list.find((candidate) => candidate.id === fields.model);
    if (!model)
      throw new ChatInputError(
        `model: the model ${JSON.stringify(fields.model)} does not exist; GET /v1/models lists ${this.list.map((candidate) => `"${candidate.id}"`).join(', ')}.`,
        'model',
        'model_not_found',
      );
    const { agent_mode: agentMode, agent_level: agentLevel } = fields;
    if (agentMode !== undefined && agentMode !== null && typeof agentMode !== 'boolean') throw new ChatInputError('agent_mode: must be a boolean.', 'agent_mode', 'invalid_type');
    if (agentLevel !== undefined && agentLevel !== null && typeof agentLevel !== 'string')
      throw new ChatInputError('agent_level: must be a string.', 'agent_level', 'invalid_type');
    const mode = agentMode === false ? 'direct' : model.mode;
    if (agentMode === true && model.mode === 'direct') throw new ChatInputError(`agent_mode: true contradicts the model "${model.id}".`, 'agent_mode');
    if (typeof agentLevel !== 'string') return { mode, tier: model.tier };
    const tiers = [...new Set([DEFAULT_TIER, ...this.tiers])];
    if (!tiers.includes(agentLevel))
      throw new ChatInputError(`agent_level: unknown tier ${JSON.stringify(agentLevel.slice(0, 64))}; the tiers are ${tiers.join(', ')}.`, 'agent_level');
    if (model.tier !== DEFAULT_TIER && model.tier !== agentLevel) throw new ChatInputError(`agent_level: "${agentLevel}" contradicts the model "${model.id}".`, 'agent_level');
    return { mode, tier: agentLevel };
  }

  /** The id a Task's answer names as its model. */
  idOf(task: { mode: string; tier: string }): string {
    if (task.mode === 'direct') return `${this.baseId}-direct`;
    return task.tier === DEFAULT_TIER ? this.baseId : `${this.baseId}-${task.tier}`;
  }
}
