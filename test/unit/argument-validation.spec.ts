import { describe, expect, it } from '@jest/globals';
import { createHash } from 'node:crypto';
import { Ajv } from '@modelcontextprotocol/server/validators/ajv';
import { validateAgentRun, validateAgentStatus } from '../../src/tools/argument-validation.js';
import { AGENT_RUN_INPUT_SCHEMA, AGENT_STATUS_INPUT_SCHEMA } from '../../src/tools/tool-schemas.js';

const limits = { images: { maxCount: 4, maxBytesPerImage: 1024, maxTotalBytes: 2048 }, maxRequestChars: 100 };
const image = (data_base64: string) => ({ request: 'x', images: [{ mime_type: 'image/png', data_base64 }] });

describe('agent_run argument validation', () => {
  it('checks against schemas that are valid JSON Schema (the service compiles them without checking, once a start)', () => {
    const metaSchema = new Ajv({ strict: false });
    for (const schema of [AGENT_RUN_INPUT_SCHEMA, AGENT_STATUS_INPUT_SCHEMA]) expect([metaSchema.validateSchema(schema), metaSchema.errors ?? null]).toEqual([true, null]);
  });

  it('applies the schema defaults and keeps the request as given', () => {
    expect(validateAgentRun({ request: ' fix it ' }, limits)).toEqual({ request: ' fix it ', sessionId: null, temperature: null, images: [] });
  });

  it.each([
    ['padding in the middle', 'AA==AAAA'],
    ['a character outside the alphabet', 'AAA*'],
    ['URL-safe characters', 'AA-_'],
    ['a length that is not a multiple of 4', 'AAAAA'],
    ['whitespace', 'AAAA AAAA'],
    ['an empty string', ''],
  ])('refuses Base64 with %s', (_name, data) => {
    expect(() => validateAgentRun(image(data), limits)).toThrow(/data_base64: must be non-empty, valid Base64/);
  });

  it('measures the decoded size and hashes the decoded bytes', () => {
    const bytes = Buffer.from('hello image');
    const [valid] = validateAgentRun(image(bytes.toString('base64')), limits).images;
    expect(valid.bytes).toBe(bytes.length);
    expect(valid.sha256).toBe(createHash('sha256').update(bytes).digest('hex'));
  });

  it('refuses a request with NUL characters or unpaired surrogates (PostgreSQL text cannot hold them)', () => {
    expect(() => validateAgentRun({ request: 'a\u0000b' }, limits)).toThrow(/without NUL characters or unpaired surrogates/);
    expect(() => validateAgentRun({ request: 'a\ud800' }, limits)).toThrow(/without NUL characters or unpaired surrogates/);
    expect(validateAgentRun({ request: '絵文字 🎉' }, limits).request).toBe('絵文字 🎉');
  });

  it('accepts temperature at both ends of 0.0..2.0', () => {
    expect(validateAgentRun({ request: 'x', temperature: 0 }, limits).temperature).toBe(0);
    expect(validateAgentRun({ request: 'x', temperature: 2 }, limits).temperature).toBe(2);
  });

  it('refuses a request longer than the model could ever take, and names a long unknown property by its head only', () => {
    expect(validateAgentRun({ request: 'x'.repeat(100) }, limits).request).toHaveLength(100);
    expect(() => validateAgentRun({ request: 'x'.repeat(101) }, limits)).toThrow('request: 101 characters exceeds the limit of 100 characters');
    let message = '';
    try {
      validateAgentRun({ request: 'x', ['k'.repeat(100_000)]: 1 }, limits);
    } catch (error) {
      message = (error as Error).message;
    }
    expect(message).toMatch(/unknown property "k+…"/);
    expect(message.length).toBeLessThan(200);
  });
});

describe('agent_status argument validation', () => {
  it('requires a UUID task_id and allows a null session_id', () => {
    expect(validateAgentStatus({ task_id: '9ab4a40b-86fe-432a-904f-8e429c01ea8b', session_id: null })).toEqual({
      taskId: '9ab4a40b-86fe-432a-904f-8e429c01ea8b',
      sessionId: null,
    });
    expect(() => validateAgentStatus({ task_id: 'nope' })).toThrow(/task_id: must be a uuid/);
    expect(() => validateAgentStatus({ task_id: '9ab4a40b-86fe-432a-904f-8e429c01ea8b', extra: true })).toThrow(/unknown property "extra"/);
  });
});
