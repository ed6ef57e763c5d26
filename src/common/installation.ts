import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The installation's own folder (the one with package.json and public/), found by walking up from this module:
 * the same answer from the TypeScript sources (src/common), the compiled modules (build/common) and the bundled
 * entry points (dist/bundle/main.cjs and its siblings, where every module shares the bundle's own URL), whatever their depth.
 */
export const INSTALLATION = (() => {
  const start = dirname(fileURLToPath(import.meta.url));
  for (let dir = start; ; dir = dirname(dir)) {
    if (existsSync(join(dir, 'package.json'))) return dir;
    if (dirname(dir) === dir) throw new Error(`no package.json above ${start}: the installation is incomplete`);
  }
})();

/** A file of the installation, by its path from the installation's folder. */
export const installationFile = (...path: string[]) => join(INSTALLATION, ...path);
