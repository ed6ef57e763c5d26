import { Get } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiProperty } from '@nestjs/swagger';
import { EvalResultsRepository } from '../eval/eval-results.repository.js';
import { AdminAction } from './admin-auth.guard.js';
import { AdminRoutes } from './admin-routes.decorator.js';

export class EvalResultDto {
  @ApiProperty({ example: 'qwen3:8b' }) model!: string;
  @ApiProperty({ enum: ['service', 'baseline'], description: 'Through the service, or the bare tool loop of `--baseline`' }) harness!: string;
  @ApiProperty({ format: 'date-time', description: 'When the run ended (UTC)' }) finished_at!: string;
  @ApiProperty({ description: 'The version of the service that ran it' }) service_version!: string;
  @ApiProperty({ description: 'Mean over cases of the share of runs passed, 0 to 1' }) pass_at_1!: number;
  @ApiProperty({ description: 'Share of cases passed in every one of their `repeat` runs, 0 to 1' }) pass_all_n!: number;
  @ApiProperty({ type: 'integer', description: 'Runs of every case' }) repeat!: number;
  @ApiProperty({ type: 'integer' }) cases!: number;
  @ApiProperty({ description: 'false: Ctrl-C stopped the run, the figures are of what finished' }) complete!: boolean;
  @ApiProperty({ type: 'integer', description: 'Model calls that answered, all runs together' }) model_calls!: number;
  @ApiProperty({ type: 'integer' }) prompt_tokens!: number;
  @ApiProperty({ type: 'integer' }) output_tokens!: number;
}

export class EvalResultListDto {
  @ApiProperty({ type: [EvalResultDto], description: 'By model, then harness' }) items!: EvalResultDto[];
}

/** The last `npm run eval` result of each model (issue 41): the console's Models page. */
@AdminRoutes('admin/eval-results', 'eval')
export class AdminEvalResultsController {
  constructor(private readonly results: EvalResultsRepository) {}

  @Get()
  @AdminAction('admin.eval_results_read')
  @ApiOperation({ summary: 'The last `npm run eval` figures of every model evaluated against this database, per harness (docs/eval.md)' })
  @ApiOkResponse({ type: EvalResultListDto })
  async list(): Promise<EvalResultListDto> {
    const items = await this.results.latest();
    return {
      items: items.map((item) => ({
        model: item.model,
        harness: item.harness,
        finished_at: item.finishedAt,
        service_version: item.serviceVersion,
        pass_at_1: item.passAt1,
        pass_all_n: item.passAllN,
        repeat: item.repeat,
        cases: item.cases,
        complete: item.complete,
        model_calls: item.modelCalls,
        prompt_tokens: item.promptTokens,
        output_tokens: item.outputTokens,
      })),
    };
  }
}
