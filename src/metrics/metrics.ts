import { Injectable } from '@nestjs/common';
import { collectDefaultMetrics, Counter, Gauge, Registry } from 'prom-client';

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

  constructor() {
    // prom-client samples the event loop's delay every 10 ms by default: an idle service then wakes 100 times a
    // second for it alone (4 ms of CPU a second, half of an idle service's wake-ups; strace and /proc, 2026-12-05).
    // Every 100 ms still catches the stalls an operator alerts on (delays are measured from when a sample was due).
    collectDefaultMetrics({ register: this.registry, eventLoopMonitoringPrecision: 100 });
  }
}
