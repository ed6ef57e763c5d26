import { Module } from '@nestjs/common';
import { OllamaModule } from '../ollama/ollama.module.js';
import { DatabaseHealthRepository } from './database-health.repository.js';
import { HealthController } from './health.controller.js';
import { ReadinessService } from './readiness.service.js';

@Module({ imports: [OllamaModule], controllers: [HealthController], providers: [DatabaseHealthRepository, ReadinessService], exports: [ReadinessService] })
export class HealthModule {}
