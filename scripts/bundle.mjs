// The second step of `npm run build`: bundles the compiled modules (build/, from scripts/compile.mjs) into the three entry
// points that people and tests run: dist/main.js, dist/stdio.js and dist/doctor.js, one file each.
//
// Why (docs/adr/0016-bundled-entry-points.md): a start of the unbundled service loaded about 2 800 modules, and most
// of its 1.9 CPU seconds went to Node's module loader; the stdio server is started by an MCP client for each of its
// sessions, and the test suite starts the service about 250 times. One bundle is resolved and read once.
//
// It bundles SWC's output, not the TypeScript sources: esbuild does not emit decorator metadata, which Nest's
// dependency injection reads (design:paramtypes), and SWC's JavaScript already carries it.
import { build } from 'esbuild';
import { rmSync } from 'node:fs';
import { join } from 'node:path';

const root = join(import.meta.dirname, '..');
const outdir = join(root, 'dist');

// Packages that stay outside the bundle:
// - better-sqlite3 finds its native addon (build/Release/*.node) from its own folder;
// - Nest imports these optional packages lazily, only for features this service does not use (microservices,
//   websockets, Fastify); they are not installed, and bundling would fail on them.
const external = ['better-sqlite3', '@nestjs/microservices', '@nestjs/microservices/*', '@nestjs/websockets', '@nestjs/websockets/*', '@fastify/static'];

rmSync(outdir, { recursive: true, force: true });
await build({
  absWorkingDir: root,
  entryPoints: ['build/main.js', 'build/stdio.js', 'build/doctor.js'],
  outdir,
  bundle: true,
  // No shared chunks: across chunks esbuild does not keep the order of side-effect imports, and reflect-metadata
  // must run before the first decorator does (it did not, with splitting).
  format: 'esm',
  platform: 'node',
  target: 'node20.19',
  external,
  // Nest names providers, loggers and routes after their classes; esbuild renames classes that share a name.
  keepNames: true,
  // CommonJS packages inside an ES module bundle still call require() for Node's built-ins.
  banner: { js: "import { createRequire as __bundleRequire } from 'node:module'; const require = __bundleRequire(import.meta.url);" },
  // Linked maps back to the TypeScript sources (through the maps of build/): `node --enable-source-maps dist/main.js`.
  sourcemap: 'linked',
  legalComments: 'linked',
  logLevel: 'warning',
});
