import { describe, expect, it } from '@jest/globals';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { z } from 'zod';
import { camelize, type ConfigError, validateConfig } from '../../src/config/agent-config.js';
import { loadConfig } from '../../src/config/config.loader.js';
import { ContextBudget } from '../../src/agent/context-budget.js';
import { outputBound } from '../../src/ollama/ollama.gateway.js';

const problemsOf = (raw: unknown) => {
  try {
    validateConfig(raw);
    return [];
  } catch (error) {
    return (error as ConfigError).problems;
  }
};

describe('configuration', () => {
  it('fills every default from an empty document', () => {
    const config = validateConfig({});
    expect(config.server).toEqual({
      host: '127.0.0.1',
      port: 3000,
      allowedOrigins: [],
      maxConnections: 4096,
      maxBufferedBytes: 256 * 1024 * 1024,
      headersTimeoutMs: 10_000,
      requestTimeoutMs: 120_000,
      keepAliveTimeoutMs: 5_000,
    });
    expect(config.ollama.host).toBe('http://127.0.0.1:11434');
    expect(config.mcp.images).toEqual({ maxCount: 4, maxBytesPerImage: 10 * 1024 * 1024, maxTotalBytes: 20 * 1024 * 1024 });
    expect(config.database).toMatchObject({ type: 'sqlite', path: './data/agent.sqlite' });
  });

  it('takes ollama.think as a YAML boolean or a level, and agent.text_tools as a boolean only', () => {
    expect(validateConfig({ ollama: { think: true } }).ollama.think).toBe('true');
    expect(validateConfig({ ollama: { think: 'high' } }).ollama.think).toBe('high');
    expect(validateConfig({}).ollama).toMatchObject({ think: 'auto', stallTimeoutMs: 60_000 });
    expect(validateConfig({}).agent.textTools).toBe(true);
    expect(problemsOf({ ollama: { think: 'max' }, agent: { text_tools: 'no' } })).toEqual([
      'ollama.think: must be one of auto, true, false, low, medium, high (got "max")',
      'agent.text_tools: expected true or false',
    ]);
  });

  it('isolates sessions by default, and refuses shared workspaces or unsandboxed commands behind an SSO proxy', () => {
    expect(validateConfig({}).workspace).toMatchObject({ isolation: 'session', template: '', maxSessionBytes: 1024 * 1024 * 1024, retentionDays: 0 });
    expect(validateConfig({}).mcp.resources).toEqual({ maxReadBytes: 10 * 1024 * 1024 });
    expect(validateConfig({ workspace: { isolation: 'shared' } }).workspace.isolation).toBe('shared');
    const proxy = { mode: 'proxy_headers', trusted_proxies: ['10.0.0.1'] };
    expect(problemsOf({ auth: proxy, workspace: { isolation: 'shared' } })).toEqual([
      "workspace.isolation: shared lets every user's Tasks read and change each other's files; use session when auth.mode is proxy_headers",
    ]);
    expect(problemsOf({ auth: proxy, workspace: { sandbox: 'none' } })).toEqual([
      "workspace.sandbox: none runs commands unconfined, where they could reach other sessions' files; use auto or bubblewrap when auth.mode is proxy_headers",
    ]);
    expect(problemsOf({ workspace: { isolation: 'private', max_session_bytes: 10 } })).toEqual([
      'workspace.isolation: must be one of session, shared (got "private")',
      'workspace.max_session_bytes: must be between 1024 and 1099511627776 (got 10)',
    ]);
  });

  it('names every unknown key and every bad value', () => {
    expect(
      problemsOf({
        sever: {},
        server: { port: 'eighty', prot: 1 },
        ollama: { temperature: 3, host: 'not a url', seed: 1.5 },
        mcp: { images: { max_count: 1.5 } },
        database: { type: 'mysql' },
      }),
    ).toEqual([
      'sever: unknown key',
      'server.prot: unknown key',
      'server.port: expected an integer',
      'ollama.host: must be an http:// or https:// URL (got "not a url")',
      'ollama.temperature: must be between 0 and 2 (got 3)',
      'ollama.seed: expected an integer',
      'database.type: must be one of sqlite, postgres (got "mysql")',
      'mcp.images.max_count: expected an integer',
    ]);
  });

  it('gives each problem as the YAML key path and a message, for callers that name keys their own way', () => {
    try {
      validateConfig({ mcp: { tasks: { ttl_ms: 1 } }, sever: {}, auth: { admin_token: 'short' } });
      throw new Error('expected a ConfigError');
    } catch (error) {
      expect((error as ConfigError).issues).toEqual([
        { path: ['sever'], message: 'unknown key' },
        { path: ['mcp', 'tasks', 'ttl_ms'], message: 'must be between 1000 and 31536000000 (got 1)' },
      ]);
    }
  });

  it('checks rules across keys only once every key is valid, and names the key that must change', () => {
    expect(problemsOf({ auth: { admin_token: 'short' }, server: { port: -1 } })).toEqual(['server.port: must be between 0 and 65535 (got -1)']);
    expect(problemsOf({ auth: { admin_token: 'short' } })).toEqual(['auth.admin_token: must be at least 24 characters']);
    expect(problemsOf({ mcp: { images: { max_bytes_per_image: 100, max_total_bytes: 10 } } })).toEqual([
      'mcp.images.max_bytes_per_image: must not exceed mcp.images.max_total_bytes',
    ]);
  });

  it('bounds ollama.num_predict by half the context, and sends num_ctx / 8 when it is 0', () => {
    expect(validateConfig({}).ollama.numPredict).toBe(0);
    expect(outputBound(validateConfig({ ollama: { num_ctx: 8192 } }).ollama)).toBe(1024);
    expect(outputBound(validateConfig({ ollama: { num_ctx: 8192, num_predict: 500 } }).ollama)).toBe(500);
    expect(new ContextBudget(validateConfig({ ollama: { num_ctx: 8192, num_predict: 500 } }).ollama).limit).toBe(7692);
    expect(problemsOf({ ollama: { num_ctx: 8192, num_predict: 5000 } })).toEqual([
      'ollama.num_predict: must not exceed half of ollama.num_ctx (4096): the rest is the room for the prompt',
    ]);
    expect(problemsOf({ ollama: { num_predict: -1 } })).toEqual(['ollama.num_predict: must be between 0 and 524288 (got -1)']);
  });

  it('refuses HTTP limits that contradict each other or the largest request the image limits allow', () => {
    // 20 MiB of images and 20 MiB of files (Chat API, A2A) as Base64 plus 1 MiB: 56 972 632 bytes.
    expect(problemsOf({ server: { max_buffered_bytes: 16 * 1024 * 1024 } })).toEqual([
      'server.max_buffered_bytes: must be at least the largest request body, 56972632 bytes (from mcp.images.max_total_bytes and mcp.files.max_bytes)',
    ]);
    expect(
      problemsOf({ server: { max_buffered_bytes: 16 * 1024 * 1024 }, mcp: { images: { max_bytes_per_image: 1024, max_total_bytes: 1024 }, files: { max_bytes: 1024 } } }),
    ).toEqual([]);
    expect(problemsOf({ server: { headers_timeout_ms: 60_000, request_timeout_ms: 30_000 } })).toEqual(['server.headers_timeout_ms: must not exceed server.request_timeout_ms']);
    expect(problemsOf({ server: { max_connections: 0, keep_alive_timeout_ms: 10 } })).toEqual([
      'server.max_connections: must be between 1 and 65536 (got 0)',
      'server.keep_alive_timeout_ms: must be between 1000 and 600000 (got 10)',
    ]);
  });

  it('takes every default for a section left empty in YAML, and refuses a section that is not a mapping', () => {
    expect(validateConfig({ server: null }).server.port).toBe(3000);
    expect(problemsOf({ server: ['x'], queue: 5 })).toEqual(['server: expected a mapping', 'queue: expected a mapping']);
    expect(problemsOf('text')).toEqual(['(root): expected a mapping']);
  });

  it('requires a url for postgres', () => {
    expect(problemsOf({ database: { type: 'postgres' } })).toEqual(['database.url: required when database.type is postgres']);
  });

  it('loads AGENT_CONFIG and applies AGENT__SECTION__KEY overrides', () => {
    const dir = mkdtempSync(join(tmpdir(), 'oam-config-'));
    const file = join(dir, 'agent.yaml');
    writeFileSync(file, 'ollama:\n  model: llama3.2\n  num_ctx: 8192\n');
    const config = loadConfig({ AGENT_CONFIG: file, AGENT__OLLAMA__NUM_CTX: '16384', AGENT__SERVER__PORT: '8080' });
    expect(config.ollama).toMatchObject({ model: 'llama3.2', numCtx: 16384 });
    expect(config.server.port).toBe(8080);
  });

  it('refuses a missing AGENT_CONFIG file and invalid YAML', () => {
    expect(() => loadConfig({ AGENT_CONFIG: '/nonexistent/agent.yaml' })).toThrow(/AGENT_CONFIG: file not found/);
    const dir = mkdtempSync(join(tmpdir(), 'oam-config-'));
    writeFileSync(join(dir, 'bad.yaml'), 'server: [unclosed');
    expect(() => loadConfig({ AGENT_CONFIG: join(dir, 'bad.yaml') })).toThrow(/not valid YAML/);
  });

  it('validates the committed agent.yaml and the example files', () => {
    expect(() => loadConfig({ AGENT_CONFIG: 'agent.yaml' })).not.toThrow();
    for (const example of ['config/sso-proxy-headers.example.yaml', 'config/pomerium-jwt.example.yaml', 'config/postgres.example.yaml', 'config/oauth-keycloak.example.yaml']) {
      expect(() => loadConfig({ AGENT_CONFIG: example })).not.toThrow();
    }
  });

  it("camel-cases the schema's own keys and keeps every map's keys as written, whatever the map is called", () => {
    const schema = z.preprocess(
      (value) => value ?? {},
      z.strictObject({
        max_items: z.number().default(1),
        labels_by_name: z.record(z.string(), z.strictObject({ shown_as: z.string() })),
        rows: z.array(z.strictObject({ row_id: z.number() })).optional(),
      }),
    );
    const value = schema.parse({ max_items: 1, labels_by_name: { snake_name: { shown_as: 'x' } }, rows: [{ row_id: 2 }] });
    expect(camelize(schema, value)).toEqual({ maxItems: 1, labelsByName: { snake_name: { shownAs: 'x' } }, rows: [{ rowId: 2 }] });
  });

  it('hands out a frozen configuration: nothing changes it after the loader resolved its paths', () => {
    const dir = mkdtempSync(join(tmpdir(), 'oam-frozen-'));
    const file = join(dir, 'agent.yaml');
    writeFileSync(file, 'ollama:\n  headers:\n    X_Api_Key: k\n');
    const config = loadConfig({ AGENT_CONFIG: file }, '/');
    expect(config.ollama.headers).toEqual({ X_Api_Key: 'k' });
    expect(Object.isFrozen(config.ollama.headers)).toBe(true);
    expect(() => {
      (config.server as { port: number }).port = 1;
    }).toThrow(TypeError);
  });
});
