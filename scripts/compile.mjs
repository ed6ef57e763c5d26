// The first step of `npm run build`: src/**/*.ts to build/**/*.js (with source maps), each file on its own through
// SWC (scripts/swc-options.js), which scripts/bundle.mjs then bundles into dist/. It checks no types: tsc does that in
// npm test's checks and in `npm run typecheck` (docs/adr/0017-swc-compiles-tsc-checks.md).
import { transformFile } from '@swc/core';
import { mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { basename, dirname, join, relative } from 'node:path';
import { swcOptions } from './swc-options.js';

const root = join(import.meta.dirname, '..');
const src = join(root, 'src');
const out = join(root, 'build');

const sources = readdirSync(src, { recursive: true, encoding: 'utf8' }).filter((file) => file.endsWith('.ts') && !file.endsWith('.d.ts'));
rmSync(out, { recursive: true, force: true });
await Promise.all(
  sources.map(async (file) => {
    const target = join(out, file.replace(/\.ts$/, '.js'));
    const { code, map } = await transformFile(join(src, file), { ...swcOptions, sourceMaps: true, outputPath: target, swcrc: false, configFile: false });
    mkdirSync(dirname(target), { recursive: true });
    // The map names the TypeScript source relative to itself, as tsc's do; esbuild follows it into dist/'s maps.
    const sourceMap = { ...JSON.parse(map), sources: [relative(dirname(target), join(src, file))] };
    writeFileSync(target, `${code}\n//# sourceMappingURL=${basename(target)}.map\n`);
    writeFileSync(`${target}.map`, JSON.stringify(sourceMap));
  }),
);
