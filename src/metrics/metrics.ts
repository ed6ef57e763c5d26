import { Injectable } from '@nestjs/common';
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';

/** Seconds, from a fast tool call to a long model call. */
const DURATION_BUCKETS = [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600];

/**
 * The service's Prometheus metrics: process defaults (CPU, memory, event-loop lag, GC) and the
 * counters an operator alerts on. One registry per instance, so tests and several apps in one process
 * never share counts. Served at GET /admin/metrics (admins only).
 */
@Injectable()
export class Metrics {
  readonly registry = new Registry();

  /** Audit events that could not be written: each one failed its action (fail-closed). Alert on any increase. */
  readonly auditWriteFailures = new Counter({
    name: 'audit_write_failures_total',
    help: 'Audit events that could not be written; the action of each was refused',
    registers: [this.registry],
  });

  readonly auditEventsWritten = new Counter({
    name: 'audit_events_written_total',
    help: 'Audit events committed to the hash chain',
    registers: [this.registry],
  });

  /** /mcp requests answered 503 because all bodies together already held `server.max_buffered_bytes`. */
  readonly bodiesRefusedBusy = new Counter({
    name: 'http_bodies_refused_busy_total',
    help: 'MCP requests refused with 503 because request bodies in flight already held server.max_buffered_bytes',
    registers: [this.registry],
  });

  readonly tasks = new Gauge({
    name: 'agent_tasks',
    help: 'Tasks stored, by status (read from the database at each scrape)',
    labelNames: ['status'],
    registers: [this.registry],
  });

  // GenAI measures (issue 39). Labels are bounded sets: models and tiers come from the configuration, sources,
  // outcomes, surfaces and statuses are fixed words; never a user, a Task, a tool's name or anything a model wrote.

  readonly genAiTokens = new Counter({
    name: 'gen_ai_tokens_total',
    help: 'Tokens of model calls, by model, tier and direction (input: the prompt, output: what the model generated)',
    labelNames: ['model', 'tier', 'direction'],
    registers: [this.registry],
  });

  readonly genAiCallDuration = new Histogram({
    name: 'gen_ai_client_operation_duration_seconds',
    help: 'Duration of each model call (a chat request to Ollama, streamed to its end), by model, tier and outcome',
    labelNames: ['model', 'tier', 'outcome'],
    buckets: DURATION_BUCKETS,
    registers: [this.registry],
  });

  readonly genAiTimeToFirstToken = new Histogram({
    name: 'gen_ai_server_time_to_first_token_seconds',
    help: 'Time from a model call to its first streamed chunk, by model and tier',
    labelNames: ['model', 'tier'],
    buckets: DURATION_BUCKETS,
    registers: [this.registry],
  });

  readonly toolCallDuration = new Histogram({
    name: 'agent_tool_call_duration_seconds',
    help: 'Duration of each tool call of a run, by source (tool_call: workspace and core tools, command, file_op, mcp_tool: other MCP servers)',
    labelNames: ['source'],
    buckets: DURATION_BUCKETS,
    registers: [this.registry],
  });

  readonly toolCallErrors = new Counter({
    name: 'agent_tool_call_errors_total',
    help: 'Tool calls that did not succeed, by source and outcome (error, denied, timeout, cancelled)',
    labelNames: ['source', 'outcome'],
    registers: [this.registry],
  });

  readonly queueWait = new Histogram({
    name: 'agent_task_queue_wait_seconds',
    help: 'Time from a Task being accepted to a worker claiming it',
    buckets: DURATION_BUCKETS,
    registers: [this.registry],
  });

  readonly tasksEnded = new Counter({
    name: 'agent_tasks_ended_total',
    help: 'Tasks that ended, by the surface that accepted them and their end state',
    labelNames: ['surface', 'status'],
    registers: [this.registry],
  });

  readonly quotaRefusals = new Counter({
    name: 'agent_quota_refusals_total',
    help: 'Requests refused at accept because their user was past quotas.tokens_per_user_day',
    registers: [this.registry],
  });

  constructor() {
    // prom-client samples the event loop's delay every 10 ms by default: an idle service then wakes 100 times a
    // second for it alone (4 ms of CPU a second, half of an idle service's wake-ups; strace and /proc, 2026-12-05).
    // Every 100 ms still catches the stalls an operator alerts on (delays are measured from when a sample was due).
    collectDefaultMetrics({ register: this.registry, eventLoopMonitoringPrecision: 100 });
  }
}
