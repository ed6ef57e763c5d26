/**
 * `npm run openapi`: starts the built service on a scratch configuration and writes the OpenAPI
 * document it generates from its controllers to docs/openapi.json (a test keeps the two equal).
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ServiceProcess, writeConfig } from '../test/support/service-process.js';

const service = await new ServiceProcess((await writeConfig('http://127.0.0.1:9')).file).start();
try {
  const document = await (await fetch(`http://127.0.0.1:${service.port}/admin/openapi.json`)).json();
  writeFileSync(join(service.root, 'docs/openapi.json'), `${JSON.stringify(document, null, 2)}\n`);
  process.stdout.write('docs/openapi.json written\n');
} finally {
  await service.stop();
}
