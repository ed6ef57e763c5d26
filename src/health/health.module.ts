import { Module } from '@nestjs/common';
import { McpClientModule } from '../mcp-client/mcp-client.module.js';
import { OllamaModule } from '../ollama/ollama.module.js';
import { DatabaseHealthRepository } from './database-health.repository.js';
import { HealthController } from './health.controller.js';
import { ReadinessService } from './readiness.service.js';

@Module({ imports: [OllamaModule, McpClientModule], controllers: [HealthController], providers: [DatabaseHealthRepository, ReadinessService], exports: [ReadinessService] })
export class HealthModule {}
