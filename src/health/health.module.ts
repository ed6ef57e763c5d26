import { Module } from '@nestjs/common';
import { OllamaModule } from '../ollama/ollama.module.js';
import { HealthController } from './health.controller.js';
import { ReadinessService } from './readiness.service.js';

@Module({ imports: [OllamaModule], controllers: [HealthController], providers: [ReadinessService], exports: [ReadinessService] })
export class HealthModule {}
