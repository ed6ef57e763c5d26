/**
 * The input JSON Schemas of spec §2.1 and §3.1, byte for byte, and the annotations of spec §1.
 * They are module constants on purpose: built inside the per-request server factory they would be
 * recompiled on every HTTP request.
 */
export const AGENT_RUN_INPUT_SCHEMA = {
    type: 'object',
    properties: {
        request: {
            description: 'Non-empty natural-language work request.',
            type: 'string',
        },
        session_id: {
            description: 'Existing session UUID, or omit to create a session.',
            type: ['string', 'null'],
            format: 'uuid',
            default: null,
        },
        temperature: {
            description: 'Task-scoped temperature from 0.0 through 2.0.',
            type: ['number', 'null'],
            default: null,
        },
        images: {
            description: 'Optional PNG, JPEG, or WebP images.',
            type: ['array', 'null'],
            items: {
                type: ['object', 'null'],
                properties: {
                    mime_type: {
                        type: ['string', 'null'],
                    },
                    data_base64: {
                        type: ['string', 'null'],
                    },
                },
                required: ['mime_type', 'data_base64'],
                additionalProperties: false,
            },
            default: null,
        },
    },
    required: ['request'],
    additionalProperties: false,
};
export const AGENT_STATUS_INPUT_SCHEMA = {
    type: 'object',
    properties: {
        task_id: {
            description: 'Task UUID returned by agent_run.',
            type: 'string',
            format: 'uuid',
        },
        session_id: {
            description: 'Optional session UUID used to verify task ownership.',
            type: ['string', 'null'],
            format: 'uuid',
            default: null,
        },
    },
    required: ['task_id'],
    additionalProperties: false,
};
export const AGENT_RUN_TOOL = {
    name: 'agent_run',
    title: 'Run agent task',
    description: 'Queue a natural-language work request for the local Ollama agent as a Task. Returns the task_id and session_id; poll agent_status until the Task ends. Pass session_id to continue a conversation.',
    annotations: { readOnlyHint: false, destructiveHint: true, openWorldHint: false },
};
export const AGENT_STATUS_TOOL = {
    name: 'agent_status',
    title: 'Agent task status',
    description: 'Get the state, subtask progress, token usage and result of an agent Task.',
    annotations: { readOnlyHint: true, destructiveHint: false, openWorldHint: false },
};
