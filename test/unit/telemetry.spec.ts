import { describe, expect, it } from '@jest/globals';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { RunEvent } from '../../src/agent/core/run-events.js';
import { RunEventHub } from '../../src/agent/run-event-hub.js';
import type { ConfigError } from '../../src/config/agent-config.js';
import { loadConfig } from '../../src/config/config.loader.js';
import { RunSpans } from '../../src/telemetry/run-spans.js';
import type { Telemetry } from '../../src/telemetry/telemetry.js';
import { parseTraceparent, parseTracestate, taskTraceIds } from '../../src/telemetry/trace-context.js';
import type { TracedTask } from '../../src/telemetry/traced-task.js';
import type { SpanRecord, TracingSdk } from '../../src/telemetry/tracing-sdk.js';

const TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';
const SPAN = '00f067aa0ba902b7';

describe('the caller’s W3C trace context', () => {
  it('reads a valid traceparent, and a later version’s first fields', () => {
    expect(parseTraceparent(`00-${TRACE}-${SPAN}-01`)).toEqual({ traceId: TRACE, spanId: SPAN, sampled: true });
    expect(parseTraceparent(`00-${TRACE}-${SPAN}-00`)).toEqual({ traceId: TRACE, spanId: SPAN, sampled: false });
    expect(parseTraceparent(`01-${TRACE}-${SPAN}-01-what-comes-next`)).toEqual({ traceId: TRACE, spanId: SPAN, sampled: true });
  });

  it('ignores anything else (W3C: a receiver starts a new trace, it never fails the request)', () => {
    for (const bad of [
      undefined,
      42,
      '',
      `ff-${TRACE}-${SPAN}-01`,
      `00-${TRACE}-${SPAN}-01-extra`,
      `00-${'0'.repeat(32)}-${SPAN}-01`,
      `00-${TRACE}-${'0'.repeat(16)}-01`,
      `00-${TRACE.toUpperCase()}-${SPAN}-01`,
      `00-${TRACE}-${SPAN}`,
      'x'.repeat(10_000),
    ])
      expect(parseTraceparent(bad)).toBeNull();
  });

  it('keeps a well-formed tracestate, drops a malformed or oversized one whole', () => {
    expect(parseTracestate('rojo=00f067aa0ba902b7, congo=t61rcWkgMzE')).toBe('rojo=00f067aa0ba902b7,congo=t61rcWkgMzE');
    expect(parseTracestate('tenant@vendor=value')).toBe('tenant@vendor=value');
    expect(parseTracestate('Bad=1')).toBeNull();
    expect(parseTracestate('a=1,b=\u0007')).toBeNull();
    expect(parseTracestate('a=1\r\nX-Injected: yes')).toBeNull();
    expect(parseTracestate(Array.from({ length: 33 }, (_, i) => `k${i}=v`).join(','))).toBeNull();
    expect(parseTracestate(`a=${'v'.repeat(255)},b=${'v'.repeat(255)},c=1`)).toBeNull();
  });

  it('gives a Task its own span in the caller’s trace, a trace of its own when tracing is on, else none', () => {
    const continued = taskTraceIds({ traceparent: `00-${TRACE}-${SPAN}-01`, tracestate: 'rojo=1' }, false)!;
    expect(continued).toEqual({ traceId: TRACE, spanId: expect.stringMatching(/^[0-9a-f]{16}$/), traceParent: `00-${TRACE}-${SPAN}-01`, traceState: 'rojo=1' });
    expect(continued.spanId).not.toBe(SPAN);
    expect(taskTraceIds({ tracestate: 'rojo=1' }, true)).toEqual({
      traceId: expect.stringMatching(/^[0-9a-f]{32}$/),
      spanId: expect.stringMatching(/^[0-9a-f]{16}$/),
      traceParent: null,
      traceState: null,
    });
    expect(taskTraceIds(undefined, false)).toBeNull();
  });
});

describe('the telemetry configuration', () => {
  const load = (yaml: string, env: NodeJS.ProcessEnv = {}) => {
    const dir = mkdtempSync(join(tmpdir(), 'oam-telemetry-'));
    writeFileSync(join(dir, 'agent.yaml'), yaml);
    return loadConfig({ AGENT_CONFIG: join(dir, 'agent.yaml'), ...env }, dir);
  };

  it('is off by default, with the quota off too', () => {
    const config = load('{}\n');
    expect(config.telemetry).toEqual({ otlpEndpoint: '', otlpProtocol: 'http/protobuf', serviceName: 'ollama-agent-mcp', captureContent: false });
    expect(config.quotas).toEqual({ tokensPerUserDay: 0, tokensPerUserDayByGroup: [] });
  });

  it('honours the standard OTEL_* variables, below AGENT__ overrides; OTEL_SDK_DISABLED turns it off', () => {
    const env = { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318', OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json', OTEL_SERVICE_NAME: 'agents-eu' };
    expect(load('{}\n', env).telemetry).toMatchObject({ otlpEndpoint: 'http://collector:4318', otlpProtocol: 'http/json', serviceName: 'agents-eu' });
    expect(load('{}\n', { ...env, AGENT__TELEMETRY__SERVICE_NAME: 'mine' }).telemetry.serviceName).toBe('mine');
    expect(load('{}\n', { ...env, OTEL_SDK_DISABLED: 'true' }).telemetry.otlpEndpoint).toBe('');
  });

  it('names the variable or key of a bad value', () => {
    const problems = (yaml: string, env: NodeJS.ProcessEnv = {}) => {
      try {
        load(yaml, env);
        return [];
      } catch (error) {
        return (error as ConfigError).problems;
      }
    };
    expect(problems('{}\n', { OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' })).toEqual([
      expect.stringContaining('OTEL_EXPORTER_OTLP_PROTOCOL (telemetry.otlp_protocol): must be one of http/protobuf, http/json'),
    ]);
    expect(problems('telemetry:\n  otlp_endpoint: "http://u:p@collector:4318"\n')).toEqual([expect.stringContaining('telemetry.otlp_endpoint: must not hold credentials')]);
    expect(problems('quotas:\n  tokens_per_user_day_by_group: { heavy: -1 }\n')).toEqual([expect.stringContaining('quotas.tokens_per_user_day_by_group')]);
  });
});

/** A tracing SDK that keeps what it is given. */
class RecordingSdk {
  readonly records: SpanRecord[] = [];
  readonly opened: { name: string; ended: boolean }[] = [];
  record(span: SpanRecord): void {
    this.records.push(span);
  }
  open(name: string) {
    const span = { name, ended: false };
    this.opened.push(span);
    return { end: () => void (span.ended = true) };
  }
}

const task: TracedTask = {
  id: 't1',
  sessionId: 's1',
  traceId: TRACE,
  spanId: 'aaaaaaaaaaaaaaaa',
  traceParent: `00-${TRACE}-${SPAN}-01`,
  traceState: null,
  surface: 'mcp-http',
  tier: 'default',
  mode: 'agent',
  createdAt: new Date(Date.now() - 5000).toISOString(),
  request: 'SECRET REQUEST',
};

function spansWith(captureContent: boolean) {
  const sdk = new RecordingSdk();
  const hub = new RunEventHub();
  const telemetry = { enabled: true, captureContent, tracing: sdk as unknown as TracingSdk } as unknown as Telemetry;
  const spans = new RunSpans(telemetry, hub);
  spans.onModuleInit();
  return { sdk, hub, spans };
}

const step = (kind: string, name: string, detail: Record<string, unknown>, extra: Record<string, unknown> = {}): RunEvent =>
  ({
    type: 'step',
    taskId: 't1',
    step: { taskId: 't1', subtask: '', kind, name, outcome: 'ok', durationMs: 40, startedAt: new Date().toISOString(), detail, ...extra },
  }) as RunEvent;

describe('the spans of a run', () => {
  it('builds the model call, tool call and wait spans under the Task’s span, and the Task’s span under the caller’s, with no content', async () => {
    const { sdk, hub, spans } = spansWith(false);
    spans.started(task);
    await hub.publish(step('model_call', 'chat', { model: 'qwen3', doneReason: 'stop', firstTokenMs: 120, content: 'SECRET ANSWER' }, { inputTokens: 11, outputTokens: 7 }));
    await hub.publish(step('command', 'cat /etc/SECRET', { exitCode: 0 }));
    await hub.publish(step('tool_call', 'SECRET tool name the model made up', { error: 'unknown tool' }, { outcome: 'error' }));
    await hub.publish({ type: 'paused', taskId: 't1', kind: 'approval', id: 'a1' });
    await hub.publish({ type: 'status', taskId: 't1', status: 'running', currentTask: 'x' });
    spans.ended(task, 'completed', { result: 'SECRET RESULT', inputTokens: 11, outputTokens: 7 });

    const taskRef = { traceId: TRACE, spanId: 'aaaaaaaaaaaaaaaa', sampled: true, traceState: null };
    expect(sdk.records.map((record) => [record.name, record.parent])).toEqual([
      ['queue wait', taskRef],
      ['chat qwen3', taskRef],
      ['execute_tool run_command', taskRef],
      ['execute_tool unknown', taskRef],
      ['invoke_agent ollama-agent-mcp', { traceId: TRACE, spanId: SPAN, sampled: true, traceState: null }],
    ]);
    expect(sdk.records[1].attributes).toMatchObject({
      'gen_ai.request.model': 'qwen3',
      'gen_ai.usage.input_tokens': 11,
      'gen_ai.usage.output_tokens': 7,
      'gen_ai.response.finish_reasons': ['stop'],
      'gen_ai.response.time_to_first_chunk': 0.12,
    });
    expect(sdk.records[1].endMs - sdk.records[1].startMs).toBe(40);
    expect(sdk.records[3].error).toBe('error');
    expect(sdk.records[4].ids).toEqual({ traceId: TRACE, spanId: 'aaaaaaaaaaaaaaaa' });
    expect(sdk.opened).toEqual([{ name: 'wait approval', ended: true }]);
    expect(JSON.stringify(sdk.records)).not.toMatch(/SECRET/);
  });

  it('adds the request, answers and arguments only with telemetry.capture_content', async () => {
    const { sdk, hub, spans } = spansWith(true);
    spans.started(task);
    await hub.publish(step('model_call', 'chat', { model: 'qwen3', content: 'SECRET ANSWER' }));
    await hub.publish(step('tool_call', 'read_file', { arguments: { path: 'SECRET.txt' } }));
    spans.ended(task, 'completed', { result: 'SECRET RESULT', inputTokens: 0, outputTokens: 0 });
    const text = JSON.stringify(sdk.records);
    for (const secret of ['SECRET ANSWER', 'SECRET.txt', 'SECRET RESULT', 'SECRET REQUEST']) expect(text).toContain(secret);
  });

  it('forgets a run that left without an end (a lost lease): its wait ends, later events record nothing', async () => {
    const { sdk, hub, spans } = spansWith(false);
    spans.started(task);
    await hub.publish({ type: 'paused', taskId: 't1', kind: 'question', id: 'q1' });
    spans.forget('t1');
    await hub.publish(step('model_call', 'chat', {}));
    expect(sdk.opened).toEqual([{ name: 'wait question', ended: true }]);
    expect(sdk.records.map((record) => record.name)).toEqual(['queue wait']);
  });

  it('records nothing for a Task without a trace, and ignores other runs’ events', async () => {
    const { sdk, hub, spans } = spansWith(false);
    spans.started({ ...task, traceId: null, spanId: null });
    await hub.publish(step('model_call', 'chat', {}));
    spans.ended({ ...task, traceId: null, spanId: null }, 'completed', { result: '', inputTokens: 0, outputTokens: 0 });
    expect(sdk.records).toEqual([]);
  });
});
