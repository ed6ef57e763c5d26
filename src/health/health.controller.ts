import { Controller, Get, HttpStatus, Res } from '@nestjs/common';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import { InjectDataSource } from '@nestjs/typeorm';
import type { Response } from 'express';
import { DataSource } from 'typeorm';
import { AppConfig } from '../config/app-config.js';
import { isModelPulled } from '../ollama/model-name.js';
import { OllamaGateway } from '../ollama/ollama.gateway.js';

@ApiTags('health')
@Controller()
export class HealthController {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly ollama: OllamaGateway,
    private readonly config: AppConfig,
  ) {}

  @Get('healthz')
  @ApiOperation({ summary: 'Liveness: the process answers' })
  alive() {
    return { status: 'ok' };
  }

  @Get('readyz')
  @ApiOperation({ summary: 'Readiness: database reachable, Ollama reachable, configured model present' })
  async ready(@Res({ passthrough: true }) res: Response) {
    const checks = await Promise.all([
      this.check('database', async () => void (await this.dataSource.query('SELECT 1'))),
      this.check('ollama', async () => {
        const models = await this.ollama.models(AbortSignal.timeout(3000));
        const wanted = this.config.ollama.model;
        if (!isModelPulled(models, wanted)) throw new Error(`model ${wanted} is not pulled`);
      }),
    ]);
    const ready = checks.every((check) => check.ok);
    res.status(ready ? HttpStatus.OK : HttpStatus.SERVICE_UNAVAILABLE);
    return { status: ready ? 'ready' : 'not_ready', checks: Object.fromEntries(checks.map(({ name, ...rest }) => [name, rest])) };
  }

  private async check(name: string, probe: () => Promise<void>) {
    try {
      await probe();
      return { name, ok: true };
    } catch (error) {
      return { name, ok: false, error: (error as Error).message };
    }
  }
}
