import './startup/node-version.js';
import 'reflect-metadata';
import { Logger } from '@nestjs/common';
import { StderrLogger } from './common/stderr-logger.js';
import type { AppConfig } from './config/app-config.js';
import { loadConfig } from './config/config.loader.js';
import { checkEval } from './doctor/eval-check.js';
import { checkDatabase, checkSandbox, checkStorage } from './doctor/local-checks.js';
import { checkMcpServers } from './doctor/mcp-server-checks.js';
import { checkIssuer } from './identity/oauth/issuer-check.js';
import { OllamaDiagnosis, type CheckLine } from './ollama/ollama-diagnosis.js';
import { OllamaGateway } from './ollama/ollama.gateway.js';
import { exitOnStartupFailure } from './startup/startup-error.js';

const OLLAMA_CHECK_MS = 10_000;

/**
 * `npm run doctor`: checks what a Task needs, one line each, `ok` or what to do; exits 1 when any
 * check fails. It reads the same configuration as the service; like its start-up, it creates the
 * default workspace and database folders when missing, and nothing else. A configuration the service
 * would refuse is reported the way the service reports it.
 */
async function main(): Promise<void> {
  let config: AppConfig;
  try {
    config = loadConfig();
  } catch (error) {
    exitOnStartupFailure(error);
  }
  // What the MCP servers' connections log (their stderr included) goes to stderr, as in the service.
  Logger.overrideLogger(new StderrLogger(config.log.format));
  const ollama = await new OllamaDiagnosis(new OllamaGateway(config), config).run(AbortSignal.timeout(OLLAMA_CHECK_MS));
  const lines: CheckLine[] = [
    ...ollama,
    checkStorage(config),
    checkSandbox(config.workspace),
    await checkDatabase(config.database),
    await checkEval(config),
    ...(await checkMcpServers(config.agent.mcpServers, config.workspace)),
    ...(await checkIssuer(config)),
  ];
  // This is its own command (dist/doctor.js), never the stdio server: its report is its output, on stdout so
  // that it can be piped or saved; anything the checks log goes to stderr as in the service.
  for (const line of lines) process.stdout.write(`${line.level.padEnd(4)}  ${line.name}: ${line.message}\n`);
  process.exitCode = lines.some((line) => line.level === 'fail') ? 1 : 0;
}

void main();
