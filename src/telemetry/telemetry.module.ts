import { Module } from '@nestjs/common';
import { AgentModule } from '../agent/agent.module.js';
import { RunMetrics } from './run-metrics.js';
import { RunSpans } from './run-spans.js';
import { TaskTelemetry } from './task-telemetry.js';
import { Telemetry } from './telemetry.js';

/** Traces (OpenTelemetry, off by default) and the GenAI metrics of runs (issue 39). */
@Module({
  imports: [AgentModule],
  providers: [Telemetry, RunSpans, RunMetrics, TaskTelemetry],
  exports: [Telemetry, TaskTelemetry],
})
export class TelemetryModule {}
