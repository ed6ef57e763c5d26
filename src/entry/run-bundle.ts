import { isAscii } from 'node:buffer';
import { readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname } from 'node:path';
import { Script } from 'node:vm';

const require = createRequire(import.meta.url);
// Node's CommonJS module class, for the bundle's own module object and the function wrapper Node puts around a module.
const Module = require('node:module') as { new (id: string, parent: null): NodeModule; wrap(source: string): string };

export interface BundleRun {
  /** Where the code cache of this bundle is (or will be) kept; null when Node's own loader ran it. */
  cacheFile: string | null;
  /** Whether V8 compiled from the cache instead of the source. */
  cacheUsed: boolean;
}

/** How long after the start the cache is written (or at the exit, if sooner): the start's own functions are compiled by then, not just the top level. */
const CACHE_AFTER_MS = 3000;

/**
 * Runs one of the bundles (dist/bundle/*.cjs) as a CommonJS module, compiled with V8's code cache when there is one
 * beside it, and writes that cache once the start has run (docs/adr/0018-code-cache-for-the-bundles.md): a start
 * then skips most of parsing and compiling it (0.5 to 0.63 of a start's CPU on Node 20 and 24). Node's own compile
 * cache (22.1 and later) is no replacement: a start with it took 1.36 times the CPU of one with this on Node 24
 * (docs/adr/0043-start-up-features-on-node-20-and-24.md).
 *
 * The cache file's name holds the build's id (a hash of the bundle, written into the entry point by
 * scripts/bundle.mjs) and the bundle's size and time, so a rebuilt or edited bundle never meets an old cache; V8
 * itself refuses a cache from another V8 version or flags, which is then written anew. A cache that cannot be read
 * or written (a read-only installation) only means a start without it: it never fails one. Under
 * `node --enable-source-maps` the bundle is required as usual instead, since Node maps stack traces back to the
 * TypeScript sources only for modules its own loader compiled.
 */
export function runBundle(bundle: string, buildId: string, cacheAfterMs = CACHE_AFTER_MS): BundleRun {
  // Node maps stack traces (--enable-source-maps) only for what its own loader compiled, which takes no cache.
  if (process.sourceMapsEnabled) {
    require(bundle);
    return { cacheFile: null, cacheUsed: false };
  }
  const { size, mtimeMs } = statSync(bundle);
  const cacheFile = `${bundle}.${buildId}-${size}-${Math.trunc(mtimeMs / 1000)}.cache`;
  const cachedData = readIfPresent(cacheFile);
  const script = new Script(Module.wrap(sourceText(readFileSync(bundle))), { filename: bundle, cachedData });
  if (!cachedData || script.cachedDataRejected) writeCacheLater(cacheFile, script, cacheAfterMs);
  const module = new Module(bundle, null);
  module.filename = bundle;
  const wrapper = script.runInThisContext() as (...args: unknown[]) => void;
  wrapper.call(module.exports, module.exports, createRequire(bundle), module, bundle, dirname(bundle));
  // V8's own verdict: undefined when it was given no cache, false when it compiled from the one it was given.
  return { cacheFile, cacheUsed: script.cachedDataRejected === false };
}

/**
 * The bundle's text. scripts/bundle.mjs writes ASCII only (its regular expressions escaped too), which Latin-1
 * decodes as it is, with no UTF-8 decoding, into a string of one byte a character: half the heap of a two-byte one,
 * and 0.9 of a start's CPU (docs/adr/0019-minified-bundles.md, "Later"). Any other bundle is read as UTF-8.
 */
function sourceText(bytes: Buffer): string {
  return bytes.toString(isAscii(bytes) ? 'latin1' : 'utf8');
}

function readIfPresent(file: string): Buffer | undefined {
  try {
    return readFileSync(file);
  } catch {
    return undefined;
  }
}

/** Once, `afterMs` after the start or at the exit if that comes first (a short command, a brief stdio session). */
function writeCacheLater(file: string, script: Script, afterMs: number): void {
  const write = () => {
    clearTimeout(timer);
    process.removeListener('exit', write);
    writeCache(file, script);
  };
  const timer = setTimeout(write, afterMs).unref();
  process.once('exit', write);
}

/** Written aside and renamed: a start that reads it meanwhile (another stdio session, say) sees all of it or none. */
function writeCache(file: string, script: Script): void {
  const aside = `${file}.${process.pid}.tmp`;
  try {
    writeFileSync(aside, script.createCachedData());
    renameSync(aside, file);
  } catch {
    // A read-only installation (a container's image, another user's checkout): starts go on without a cache.
    rmSync(aside, { force: true });
  }
}
