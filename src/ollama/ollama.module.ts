import { Module } from '@nestjs/common';
import { OllamaDiagnosis } from './ollama-diagnosis.js';
import { OllamaGateway } from './ollama.gateway.js';

@Module({ providers: [OllamaGateway, OllamaDiagnosis], exports: [OllamaGateway, OllamaDiagnosis] })
export class OllamaModule {}
