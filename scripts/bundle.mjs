// The second step of `npm run build`: bundles the compiled modules (build/, from scripts/compile.mjs) into one file
// for each of the entry points (dist/bundle/main.cjs, stdio.cjs, doctor.cjs, init.cjs, eval.cjs, eval-tools.cjs), and writes the
// entry points that people and tests run, dist/main.js, dist/stdio.js, dist/doctor.js, dist/init.js and dist/eval.js,
// which run their bundle with V8's code cache (docs/adr/0018-code-cache-for-the-bundles.md), and the package's bin,
// dist/cli.js, which dispatches to them (`npx ollama-agent-mcp stdio`; docs/adr/0023-an-npm-package-with-one-bin.md).
//
// Why (docs/adr/0016-bundled-entry-points.md): a start of the unbundled service loaded about 2 800 modules, and most
// of its 1.9 CPU seconds went to Node's module loader; the stdio server is started by an MCP client for each of its
// sessions, and the test suite starts the service about 250 times. One bundle is resolved and read once.
//
// It bundles SWC's output, not the TypeScript sources: esbuild does not emit decorator metadata, which Nest's
// dependency injection reads (design:paramtypes), and SWC's JavaScript already carries it.
import { build } from 'esbuild';
import { createHash } from 'node:crypto';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { asciiRegExps } from './ascii-regexps.mjs';

const root = join(import.meta.dirname, '..');
const outdir = join(root, 'dist');

// Packages that stay outside the bundle:
// - better-sqlite3 finds its native addon (build/Release/*.node) from its own folder; @parcel/watcher (the quota's
//   watch, ADR 0038) requires its platform's prebuilt addon package by a name made at run time;
// - Nest imports these optional packages lazily, only for features this service does not use (microservices,
//   websockets, Fastify); they are not installed, and bundling would fail on them.
// - the OpenTelemetry SDK and exporters (issue 39, ADR 0029): loaded from node_modules only when tracing is on, so a
//   service with tracing off neither reads nor compiles them (they were 6 % of the bundle); their own `import('http')`
//   then runs under Node's loader, which a vm.Script bundle (ADR 0018) does not have. The API stays bundled: the
//   SDK's copy and the bundle's share their globals and context keys (Symbol.for), as two copies of it are meant to.
const OPENTELEMETRY_SDK = [
  '@opentelemetry/context-async-hooks',
  '@opentelemetry/core',
  '@opentelemetry/exporter-trace-otlp-http',
  '@opentelemetry/exporter-trace-otlp-proto',
  '@opentelemetry/resources',
  '@opentelemetry/sdk-trace-base',
  '@opentelemetry/semantic-conventions',
];
const external = [
  'better-sqlite3',
  '@parcel/watcher',
  '@nestjs/microservices',
  '@nestjs/microservices/*',
  '@nestjs/websockets',
  '@nestjs/websockets/*',
  '@fastify/static',
  ...OPENTELEMETRY_SDK,
];

// A new command of the bin is one entry here and one row in src/cli.ts. The commands that only print (init, eval)
// are in src/cli/, the one folder besides the bin and the doctor whose code writes to stdout. eval-tools is no
// command: the eval's own MCP server, which the eval's service starts (src/eval-tools.ts).
const SOURCES = { main: 'main', stdio: 'stdio', doctor: 'doctor', init: 'cli/init', eval: 'cli/eval', 'eval-tools': 'eval-tools' };
const ENTRIES = Object.keys(SOURCES);

// @nestjs/typeorm reads two classes that TypeORM 1 no longer has (Connection, AbstractRepository) through a
// `createRequire(import.meta.url)('typeorm')` that esbuild cannot follow: in the bundle it loaded a second, unbundled
// copy of TypeORM (about 300 modules through Node's loader, with no code cache) at every start, to find two
// undefined exports. Read from the bundled TypeORM instead, as the package means to: the same values, one copy.
const typeormCompat = {
  name: 'nestjs-typeorm-compat',
  setup(build) {
    build.onLoad({ filter: /@nestjs[\\/]typeorm[\\/]dist[\\/]common[\\/]typeorm-compat\.js$/ }, () => ({
      contents: `import * as typeorm from 'typeorm';
export const Connection = typeorm['Connection'];
export const AbstractRepository = typeorm['AbstractRepository'];
`,
      loader: 'js',
    }));
  },
};

rmSync(outdir, { recursive: true, force: true });
// The bundles: CommonJS, because V8's code cache (vm.Script's cachedData) is there for scripts only, not for ES
// modules on Node 20 (docs/adr/0018-code-cache-for-the-bundles.md).
await build({
  absWorkingDir: root,
  entryPoints: Object.fromEntries(ENTRIES.map((name) => [name, `build/${SOURCES[name]}.js`])),
  outdir: join(outdir, 'bundle'),
  outExtension: { '.js': '.cjs' },
  bundle: true,
  // No shared chunks: across chunks esbuild does not keep the order of side-effect imports, and reflect-metadata
  // must run before the first decorator does (it did not, with splitting).
  format: 'cjs',
  platform: 'node',
  target: 'node20.19',
  external,
  // typeormCompat first: it replaces a file before anything else reads it.
  plugins: [typeormCompat, asciiRegExps],
  // Nest names providers, loggers and routes after their classes; esbuild renames classes that share a name.
  keepNames: true,
  // Half the bytes to read and keep in the heap at every start (docs/adr/0019-minified-bundles.md); the linked maps
  // below still lead a stack trace back to the TypeScript sources.
  minify: true,
  // The sources' import.meta.url (finding the installation, resolving better-sqlite3) is the bundle's own URL.
  define: { 'import.meta.url': '__bundleUrl' },
  banner: { js: "const __bundleUrl = require('node:url').pathToFileURL(__filename).href;" },
  // Linked maps back to the TypeScript sources (through the maps of build/): `node --enable-source-maps dist/main.js`.
  sourcemap: 'linked',
  legalComments: 'linked',
  logLevel: 'warning',
});
// What runs them (src/entry/run-bundle.ts) and the bin (src/cli.ts): ES modules of Node's built-ins only.
for (const [source, banner] of [
  ['entry/run-bundle', ''],
  ['cli', '#!/usr/bin/env node'],
]) {
  await build({
    absWorkingDir: root,
    entryPoints: [`build/${source}.js`],
    outfile: join(outdir, `${source.split('/').pop()}.js`),
    bundle: true,
    format: 'esm',
    platform: 'node',
    target: 'node20.19',
    banner: { js: banner },
    logLevel: 'warning',
  });
}
// The entry points people and tests run, by the paths they always had; each names its bundle and the bundle's
// hash, which keys the code cache.
for (const name of ENTRIES) {
  const bundle = join(outdir, 'bundle', `${name}.cjs`);
  const buildId = createHash('sha256').update(readFileSync(bundle)).digest('hex').slice(0, 16);
  writeFileSync(
    join(outdir, `${name}.js`),
    `// Written by scripts/bundle.mjs: runs bundle/${name}.cjs with V8's code cache (src/entry/run-bundle.ts).\n` +
      `import { fileURLToPath } from 'node:url';\nimport { runBundle } from './run-bundle.js';\n\n` +
      `runBundle(fileURLToPath(new URL('./bundle/${name}.cjs', import.meta.url)), '${buildId}');\n`,
  );
}
