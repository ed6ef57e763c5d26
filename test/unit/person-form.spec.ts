import { describe, expect, it } from '@jest/globals';
import { formMessage, waitingLabel } from '../../src/approvals/approval-texts.js';
import { auditedFormContent, checkFormContent, readFormContent, shownFormSchema, type FormSchema } from '../../src/approvals/person-form.js';
import { readRequestedForm } from '../../src/mcp-client/elicitation-form.js';

const schema: FormSchema = {
  type: 'object',
  properties: {
    name: { type: 'string', title: 'Name\u202e', maxLength: 10, minLength: 2 },
    pet: {
      type: 'string',
      oneOf: [
        { const: 'cat', title: 'Cat\u001b[31m' },
        { const: 'dog', title: 'Dog' },
      ],
    },
    age: { type: 'integer', minimum: 1, maximum: 120 },
    ratio: { type: 'number' },
    agree: { type: 'boolean' },
    tags: {
      type: 'array',
      items: {
        anyOf: [
          { const: 'a', title: 'A' },
          { const: 'b', title: 'B' },
        ],
      },
      maxItems: 1,
    },
  },
  required: ['name'],
};

describe("another server's form (elicitation)", () => {
  it("reads MCP's field kinds into one shape, bounded, and refuses what a person cannot be asked", () => {
    const read = readRequestedForm({
      message: 'm',
      requestedSchema: {
        type: 'object',
        properties: {
          free: { type: 'string', maxLength: 99_999, format: 'email', default: 'a@b.c' },
          titled: { type: 'string', oneOf: [{ const: 'x', title: 'Ex' }], default: 'nope' },
          many: { type: 'array', items: { type: 'string', enum: ['p', 'q'] }, minItems: 1, default: ['q'] },
          count: { type: 'number', minimum: 0, maximum: Infinity },
        },
        required: ['free', 'free', 'missing'],
      },
    } as never);
    expect(read).toEqual({
      message: 'm',
      schema: {
        type: 'object',
        properties: {
          free: { type: 'string', maxLength: 2000, format: 'email', default: 'a@b.c' },
          titled: { type: 'string', oneOf: [{ const: 'x', title: 'Ex' }] },
          many: {
            type: 'array',
            items: {
              anyOf: [
                { const: 'p', title: 'p' },
                { const: 'q', title: 'q' },
              ],
            },
            minItems: 1,
            default: ['q'],
          },
          count: { type: 'number', minimum: 0 },
        },
        required: ['free'],
      },
    });
    const problem = (requestedSchema: unknown, extra: Record<string, unknown> = {}) =>
      (readRequestedForm({ message: 'm', requestedSchema, ...extra } as never) as { problem?: string }).problem;
    expect(problem({ type: 'object', properties: { deep: { type: 'object', properties: {} } } })).toBe('the field deep is of type "object", which MCP forms do not have');
    expect(problem({ type: 'object', properties: { 'a b': { type: 'string' } } })).toMatch(/^the field name "a b" is not/);
    expect(problem({ type: 'object', properties: Object.fromEntries(Array.from({ length: 21 }, (_, i) => [`f${i}`, { type: 'boolean' }])) })).toBe('21 fields (at most 20)');
    expect(problem({ type: 'object', properties: {} }, { mode: 'url', url: 'https://x' })).toBe('a "url" elicitation (only forms are declared)');
  });

  it('takes an answer only when it fits the form', () => {
    expect(readFormContent({ name: 'Al', pet: 'dog', age: 3, ratio: 0.5, agree: true, tags: ['b'] }, schema)).toEqual({
      name: 'Al',
      pet: 'dog',
      age: 3,
      ratio: 0.5,
      agree: true,
      tags: ['b'],
    });
    expect(readFormContent({ name: 'Al' }, schema)).toEqual({ name: 'Al' });
    for (const bad of [{}, { name: 'A' }, { name: 'x'.repeat(11) }, { name: 'Al', pet: 'cow' }, { name: 'Al', age: 2.5 }, { name: 'Al', age: 0 }, { name: 'Al', ratio: 'one' }]) {
      expect(readFormContent(bad, schema)).toBeNull();
    }
    for (const bad of [{ name: 'Al', agree: 'yes' }, { name: 'Al', tags: ['a', 'b'] }, { name: 'Al', tags: ['c'] }, { name: 'Al', extra: 1 }, ['Al'], null]) {
      expect(readFormContent(bad, schema)).toBeNull();
    }
  });

  it('says which field of an answer does not fit and what it takes (the console shows it)', () => {
    const problem = (content: unknown) => (checkFormContent(content, schema) as { problem: string }).problem;
    expect(problem({ name: 'A' })).toBe('field "name" takes text of 2 to 10 characters');
    expect(problem({ name: 'Al', pet: 'cow' })).toBe('field "pet" takes one of "cat", "dog"');
    expect(problem({ name: 'Al', age: 0 })).toBe('field "age" takes an integer from 1 to 120');
    expect(problem({ name: 'Al', agree: 'yes' })).toBe('field "agree" takes true or false');
    expect(problem({ name: 'Al', tags: ['a', 'b'] })).toBe('field "tags" takes a list of distinct choices among "a", "b", at most 1');
    expect(problem({ name: 'Al', extra: 1 })).toBe('the form has no field "extra" (its fields: name, pet, age, ratio, agree, tags)');
    expect(problem({ pet: 'cat' })).toBe('required field missing: name');
    expect(problem(['Al'])).toBe('the content must be an object of the form’s fields');
    expect(checkFormContent({ name: 'Al', tags: ['a'] }, schema)).toEqual({ content: { name: 'Al', tags: ['a'] } });
  });

  it('shows who asks before what the server wrote, escaped, in the configured locale', () => {
    const row = { subject: 'Your password?\u001b[2K\u202e', form: JSON.stringify({ server: 'wiki', tool: 'login\n', schema }) };
    expect(formMessage(row, 'en')).toBe(
      'The MCP server "wiki" asks you this while the agent calls its tool login\\n. Your answer goes to that server; decline if you did not expect it.\n\nYour password?\\x1b[2K\\u202e',
    );
    expect(formMessage(row, 'ja').split('\n')[0]).toBe(
      'MCP サーバー「wiki」が、エージェントによるツール login\\n の呼び出し中に次の入力を求めています。回答はそのサーバーに送られます。心当たりがなければ辞退してください。',
    );
    expect(waitingLabel({ kind: 'form' as const, tool: 'mcp_elicitation', ...row })).toBe('question from MCP server wiki: Your password?\\x1b[2K\\u202e');
    const shown = shownFormSchema(schema);
    expect(shown.properties.name.title).toBe('Name\\u202e');
    expect((shown.properties.pet as { oneOf: unknown }).oneOf).toEqual([
      { const: 'cat', title: 'Cat\\x1b[31m' },
      { const: 'dog', title: 'Dog' },
    ]);
  });
});

describe("a form's answer in the audit log (issue 37, also seen)", () => {
  it('masks the fields that ask for a password, a PIN, a token or a secret, by their name or title', () => {
    const schema: FormSchema = {
      type: 'object',
      properties: {
        name: { type: 'string', maxLength: 100, title: 'Name' },
        password: { type: 'string', maxLength: 100 },
        code: { type: 'string', maxLength: 10, title: 'One-time code (OTP)' },
        field3: { type: 'string', maxLength: 100, title: 'Your API key' },
        // server-everything's own field: its description warns against a PIN, it asks for none.
        integer: { type: 'integer', minimum: 1, maximum: 100, description: 'Your favorite integer (do not give us your phone number, pin, or other sensitive info)' },
        pin: { type: 'integer', minimum: 0, maximum: 9999 },
        暗証: { type: 'string', maxLength: 100, title: 'パスワード' },
        subscribe: { type: 'boolean', title: 'Send me tokens of appreciation?' },
      },
      required: [],
    };
    const content = { name: 'Alice', password: 'hunter2', code: '123456', field3: 'sk-live-abc', integer: 7, pin: 1234, 暗証: 'ひみつ', subscribe: true };
    expect(auditedFormContent(content, schema)).toEqual({
      name: 'Alice',
      password: '[REDACTED]',
      code: '[REDACTED]',
      field3: '[REDACTED]',
      integer: 7,
      pin: '[REDACTED]',
      暗証: '[REDACTED]',
      // A yes/no is no secret, whatever its title says.
      subscribe: true,
    });
  });
});
