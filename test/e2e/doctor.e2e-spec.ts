import { beforeAll, describe, expect, it } from '@jest/globals';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { useStack } from '../support/e2e-stack.js';
import { freePort, writeConfig } from '../support/service-process.js';

const run = promisify(execFile);
const ADMIN_TOKEN = 'doctor-admin-token-3f9c-5e1a7b20';
const WARNING = "context: ollama.num_ctx 65536 exceeds the model's trained context of 40960 tokens";

describe('npm run doctor, the boot log and /readyz say what the model and the machine lack', () => {
  // num_ctx over the scripted model's trained 40 960 tokens. The service runs beside the doctor, as an operator's would.
  const stack = useStack({ config: { ollama: { num_ctx: 65_536 }, auth: { admin_token: ADMIN_TOKEN } } });
  const { ollama } = stack;
  // The service's boot checks ask the scripted Ollama too: they end with the context line; the cases change its answers after.
  beforeAll(() => stack.service.waitForOutput(new RegExp(WARNING.replaceAll('.', '\\.'))));

  /** The built doctor (`npm run doctor` without the build), on the test's configuration. */
  async function doctor(file = stack.config.file): Promise<{ code: number; lines: string[]; stderr: string }> {
    const env = { PATH: process.env.PATH, AGENT_CONFIG: file };
    try {
      const { stdout, stderr } = await run(process.execPath, ['dist/doctor.js'], { env, timeout: 60_000 });
      return { code: 0, lines: stdout.trimEnd().split('\n'), stderr };
    } catch (error) {
      const failed = error as { code: number; stdout: string; stderr: string };
      return { code: failed.code, lines: failed.stdout.trimEnd().split('\n'), stderr: failed.stderr };
    }
  }

  it('prints one line per check, ok or what to do, and exits 0 when nothing fails', async () => {
    ollama.capabilities = ['completion', 'tools', 'thinking', 'vision'];
    const { code, lines, stderr } = await doctor();
    expect(stderr).toBe('');
    expect(lines).toEqual([
      `ok    ollama: Ollama 0.12.10 at ${ollama.url}`,
      'ok    model: test-model is pulled',
      'ok    capabilities: tools yes, thinking yes, vision yes',
      "warn  context: ollama.num_ctx 65536 exceeds the model's trained context of 40960 tokens: answers degrade past it; set ollama.num_ctx to 40960 or less.",
      `ok    workspace: ${stack.config.workspace} is writable`,
      expect.stringMatching(/^ok {4}sandbox: bubblewrap: no network, read-only system, writable workspace, private \/tmp and PIDs/),
      expect.stringMatching(/^ok {4}database: (SQLite .*|PostgreSQL \(database\.url\)) answers$/),
      'ok    eval: no result for test-model yet: `npm run eval` measures how well it works here (docs/eval.md)',
    ]);
    expect(code).toBe(0);
  });

  it('fails on a model that is not pulled or an Ollama too old, naming the fix; warns on a model without tools', async () => {
    ollama.models = [];
    const missing = await doctor();
    expect(missing.code).toBe(1);
    expect(missing.lines[1]).toBe(`fail  model: model test-model is not pulled at ${ollama.url}: run \`ollama pull test-model\` or set ollama.model`);
    ollama.models = ['test-model:latest'];

    ollama.version = '0.6.8';
    const old = await doctor();
    expect(old.code).toBe(1);
    expect(old.lines[0]).toMatch(/^fail  ollama: Ollama 0\.6\.8 at .* is too old for streamed tool calls, which needs 0\.8\.0 or later: upgrade Ollama/);
    ollama.version = '0.12.10';

    ollama.capabilities = ['completion'];
    const noTools = await doctor();
    expect(noTools.lines[2]).toMatch(
      /^warn  capabilities: tools no, thinking no, vision no: tools go through the text tool protocol \(agent\.text_tools\), less reliable; models that call tools natively: qwen3:8b/,
    );
    ollama.capabilities = ['completion', 'tools'];
  });

  it('fails on an unreachable Ollama, and refuses a configuration the service would refuse the same way', async () => {
    const port = await freePort();
    const unreachable = await writeConfig(`http://127.0.0.1:${port}`);
    const { code, lines } = await doctor(unreachable.file);
    expect(code).toBe(1);
    expect(lines[0]).toBe(`fail  ollama: Ollama is not reachable at http://127.0.0.1:${port}: ECONNREFUSED. Start it (\`ollama serve\`) or fix ollama.host.`);

    const typo = await writeConfig(ollama.url, { ollama: { num_ctx: 100 } });
    const refused = await doctor(typo.file);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('ollama.num_ctx');
  });

  it('warns at boot and in /admin/readyz when num_ctx exceeds the trained context, and stays ready', async () => {
    expect(stack.service.stderr).toContain(WARNING);
    const ready = await fetch(`${stack.base}/admin/readyz`, { headers: { Authorization: `Bearer ${ADMIN_TOKEN}` } });
    expect(ready.status).toBe(200);
    expect(await ready.json()).toEqual({
      status: 'ready',
      checks: { database: { ok: true }, ollama: { ok: true, warnings: [expect.stringContaining(WARNING)] }, files: { ok: true } },
    });
    // Anonymous probes learn only that it is ready, as for every other reason.
    expect(await (await fetch(`${stack.base}/readyz`)).json()).toEqual({ status: 'ready', checks: { database: 'ok', ollama: 'ok', files: 'ok' } });
  });
});
