import { describe, expect, it } from '@jest/globals';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { runBundle } from '../../src/entry/run-bundle.js';
import { pollUntil } from '../support/poll.js';

/** A folder with a small CommonJS bundle that records how it was run in ran.json, and a module it requires. */
function bundleFolder(marker = 'first'): { dir: string; bundle: string; ran: () => Record<string, unknown> } {
  const dir = mkdtempSync(join(tmpdir(), 'oam-run-bundle-'));
  writeFileSync(join(dir, 'helper.cjs'), "module.exports = 'from the helper';\n");
  const bundle = join(dir, 'app.cjs');
  writeBundle(bundle, marker);
  return { dir, bundle, ran: () => JSON.parse(readFileSync(join(dir, 'ran.json'), 'utf8')) as Record<string, unknown> };
}

function writeBundle(bundle: string, marker: string): void {
  writeFileSync(
    bundle,
    `const fs = require('node:fs');\nexports.marker = ${JSON.stringify(marker)};\n` +
      `fs.writeFileSync(require('node:path').join(__dirname, 'ran.json'), JSON.stringify({ marker: module.exports.marker, filename: __filename, dirname: __dirname, helper: require('./helper.cjs'), thisIsExports: this === module.exports }));\n`,
  );
}

/**
 * The same bundle in a new folder, with its time (so its cache has the same name there) and, if given, a cache
 * file: V8 keeps what it compiled in this process by source and path, so only a new path makes it read a cache,
 * as a new process would.
 */
function copied(bundle: string, cacheFile?: string, cacheData?: Buffer | string): { bundle: string; cacheFile: string | undefined } {
  const dir = mkdtempSync(join(tmpdir(), 'oam-run-bundle-'));
  cpSync(dirname(bundle), dir, { recursive: true, preserveTimestamps: true });
  for (const name of readdirSync(dir)) if (name.endsWith('.cache')) rmSync(join(dir, name));
  const there = join(dir, basename(bundle));
  const thereCache = cacheFile && join(dir, basename(cacheFile));
  if (thereCache) writeFileSync(thereCache, cacheData ?? readFileSync(cacheFile));
  return { bundle: there, cacheFile: thereCache };
}

const cacheWritten = (file: string) => pollUntil(async () => (existsSync(file) ? true : undefined), `the code cache ${file}`);

describe('runBundle: a bundle run as a CommonJS module, with V8 code cache', () => {
  it('runs it as Node would (its own __filename, __dirname, module.exports, require), then writes the cache that the next run uses', async () => {
    const { dir, bundle, ran } = bundleFolder();
    const first = runBundle(bundle, 'build1', 0);
    expect(ran()).toEqual({ marker: 'first', filename: bundle, dirname: dir, helper: 'from the helper', thisIsExports: true });
    expect(first.cacheUsed).toBe(false);
    expect(first.cacheFile!.startsWith(`${bundle}.build1-`)).toBe(true);
    await cacheWritten(first.cacheFile!);

    const elsewhere = copied(bundle, first.cacheFile!);
    expect(runBundle(elsewhere.bundle, 'build1', 0)).toEqual({ cacheFile: elsewhere.cacheFile, cacheUsed: true });
    expect(JSON.parse(readFileSync(join(dirname(elsewhere.bundle), 'ran.json'), 'utf8'))).toMatchObject({ marker: 'first', filename: elsewhere.bundle });
    // Written aside and renamed: nothing else is left in the folder.
    expect(readdirSync(dir).sort()).toEqual(['app.cjs', 'helper.cjs', 'ran.json', first.cacheFile!.slice(dir.length + 1)].sort());
  });

  it('reads an ASCII bundle as Latin-1 and any other as UTF-8: the text it runs is the text of the file either way', () => {
    // 'caf\\u00e9' is ASCII in the file and é once run; 'café' is UTF-8 in the file, which Latin-1 would make 'cafÃ©'.
    for (const [written, expected] of [
      ['caf\\u00e9', 'café'],
      ['café 😀', 'café 😀'],
    ]) {
      const { dir, bundle } = bundleFolder();
      writeFileSync(bundle, `require('node:fs').writeFileSync(require('node:path').join(__dirname, 'text.json'), JSON.stringify({ text: '${written}' }));\n`);
      runBundle(bundle, 'build1', 0);
      expect(JSON.parse(readFileSync(join(dir, 'text.json'), 'utf8'))).toEqual({ text: expected });
    }
  });

  it('never runs a rebuilt bundle from the old cache: another build id, size or time is another cache file', async () => {
    const { bundle, ran } = bundleFolder();
    const old = runBundle(bundle, 'build1', 0);
    await cacheWritten(old.cacheFile!);
    expect(runBundle(bundle, 'build2', 0).cacheFile).not.toBe(old.cacheFile);

    writeBundle(bundle, 'other'); // the same length as 'first', a later time
    utimesSync(bundle, new Date(), new Date(Date.now() + 5000));
    const rebuilt = runBundle(bundle, 'build1', 0);
    expect(rebuilt.cacheFile).not.toBe(old.cacheFile);
    expect(rebuilt.cacheUsed).toBe(false);
    expect(ran().marker).toBe('other');
  });

  it('compiles from the source when V8 refuses the cache (damaged, another V8), and writes it anew', async () => {
    const { bundle } = bundleFolder();
    const { cacheFile } = runBundle(bundle, 'build1', 0);
    await cacheWritten(cacheFile!);
    const damaged = copied(bundle, cacheFile!, 'not a code cache');

    expect(runBundle(damaged.bundle, 'build1', 0)).toEqual({ cacheFile: damaged.cacheFile, cacheUsed: false });
    expect(JSON.parse(readFileSync(join(dirname(damaged.bundle), 'ran.json'), 'utf8')).marker).toBe('first');
    await pollUntil(async () => (readFileSync(damaged.cacheFile!, 'utf8') !== 'not a code cache' ? true : undefined), 'the cache written anew');
    expect(runBundle(copied(damaged.bundle, damaged.cacheFile).bundle, 'build1', 0).cacheUsed).toBe(true);
  });

  it('starts without a cache where none can be read or written, and leaves nothing behind', async () => {
    const { dir, bundle, ran } = bundleFolder();
    const { cacheFile } = runBundle(bundle, 'build1', 0);
    await cacheWritten(cacheFile!);
    // The cache's path taken by a folder: reading it and renaming onto it both fail, as in a read-only installation.
    rmSync(cacheFile!);
    mkdirSync(join(cacheFile!, 'taken'), { recursive: true });

    const run = runBundle(bundle, 'build1', 0);
    expect(run.cacheUsed).toBe(false);
    expect(ran().marker).toBe('first');
    // Timers of the same delay fire in the order they were set: the runner's attempt to write has been made after this.
    await new Promise((done) => setTimeout(done, 0));
    expect(readdirSync(dir).filter((name) => name.endsWith('.tmp'))).toEqual([]);
  });
});
