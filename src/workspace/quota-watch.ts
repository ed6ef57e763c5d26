import type * as ParcelWatcher from '@parcel/watcher';
import type { AsyncSubscription, Event } from '@parcel/watcher';
import type { FileHandle } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { relative, sep } from 'node:path';
import { installationFile } from '../common/installation.js';
import { lstatBeneath, openRoot } from './beneath.js';
import type { FileMark, Usage, WorkspacePaths } from './workspace-paths.js';
import { measureUsage, usageOverLimit } from './workspace-usage.js';

/** What the tally knows of a path an event named. */
interface Touched {
  /** Whether the path existed at the baseline (unknown without a walk: its first event was not a create). */
  existed: boolean;
  /** Its size now (0 once gone). */
  size: number;
  exists: boolean;
}

/**
 * Keeps the quota a bound while a command runs (ADR 0038): the workspace is watched (inotify, through
 * @parcel/watcher, one watch per directory) and every path an event names is measured again; once the
 * tally says the workspace holds more than a limit, `stop` is called (the service kills the command).
 *
 * The tally starts from the usage measured before the command and the size of each file then (the marks
 * of that walk, kept up to date by the file tools). Without marks (none yet) a file that existed before counts
 * as if all of it were new: an over-estimate; when such an estimate passes a limit, one exact walk decides and
 * gives marks. After the command the usage walk that was always there remains the authority (what this
 * misses is taken back then): events arrive in batches (50 to 500 ms), and what is written in a new directory
 * before its watch is set is not seen.
 */
export class QuotaWatch {
  private readonly touched = new Map<string, Touched>();
  /** Each path's size at the last exact walk (the one before the command, or one of the watch's own); null: unknown. */
  private sizes: Map<string, FileMark> | null;
  private pending: Promise<void> = Promise.resolve();
  private stopped = false;
  private subscription: AsyncSubscription | null = null;
  /** The root, open for the watch's life: each path an event names is measured from it, never through a link (beneath.ts). */
  private root: FileHandle | null = null;

  private constructor(
    private readonly paths: WorkspacePaths,
    private base: Usage,
    private readonly stop: (why: string) => void,
  ) {
    this.sizes = paths.marks;
  }

  /** Starts watching `paths` (usage `before`); null, and the after-command check alone, when inotify cannot (watch limit). */
  static async start(paths: WorkspacePaths, before: Usage, stop: (why: string) => void): Promise<QuotaWatch | null> {
    const watch = new QuotaWatch(paths, before, stop);
    try {
      watch.root = await openRoot(paths.root);
      // Loaded on the first watched command, not at start: the service starts from its bundle and better-sqlite3 alone
      // (small-points.e2e), and a machine without the addon runs with the after-command check, as without inotify.
      // Required from the installation, not import()ed: the bundle runs in a vm.Script (ADR 0018), which has no
      // dynamic import.
      const { subscribe } = createRequire(installationFile('package.json'))('@parcel/watcher') as typeof ParcelWatcher;
      watch.subscription = await subscribe(paths.root, (error, events) => watch.queue(error, events), { backend: 'inotify' });
    } catch {
      await watch.root?.close().catch(() => undefined);
      return null;
    }
    return watch;
  }

  /** Stops watching; waits for the batch being handled. */
  async close(): Promise<void> {
    await this.subscription?.unsubscribe().catch(() => undefined);
    this.subscription = null;
    await this.pending;
    await this.root?.close().catch(() => undefined);
    this.root = null;
  }

  private queue(error: Error | null, events: Event[]): void {
    // A lost event (queue overflow, a failed watch) makes the tally unreliable: measure exactly.
    this.pending = this.pending.then(() => (error ? this.decide(true) : this.handle(events))).catch(() => undefined);
  }

  private async handle(events: Event[]): Promise<void> {
    if (this.stopped) return;
    for (const event of events) {
      const rel = relative(this.paths.root, event.path).split(sep).join('/');
      // `..` itself or below it, not `..name`: a file named so is inside, and a watch that skipped it would not see it fill.
      if (rel === '' || rel === '..' || rel.startsWith('../')) continue;
      // Not lstat(event.path): the command may have swapped a directory on it for a link out meanwhile, and a size
      // read out there would reach the tally (and, through whether the command is stopped, the command).
      const info = await lstatBeneath(this.root!, rel.split('/'));
      const known = this.touched.get(rel);
      const existed = known?.existed ?? (this.sizes ? this.sizes.has(rel) : event.type !== 'create');
      this.touched.set(rel, { existed, exists: info !== null, size: info && !info.isDirectory() ? info.size : 0 });
    }
    await this.decide(false);
  }

  /** The usage the events say, never less than the truth while `sizes` is null (see the class comment). */
  private estimate(): Usage {
    let { bytes, entries } = this.base;
    for (const [rel, { existed, exists, size }] of this.touched) {
      bytes += size - (this.sizes?.get(rel)?.size ?? 0);
      entries += Number(exists) - Number(existed);
    }
    return { bytes, entries };
  }

  private async decide(mustMeasure: boolean): Promise<void> {
    if (this.stopped) return;
    const estimated = this.estimate();
    if (!mustMeasure && usageOverLimit(this.paths, estimated) === null) return;
    // Exact once a walk gave every size, and nothing was lost: the estimate is the usage.
    if (!mustMeasure && this.sizes !== null) return this.halt(estimated);
    const sizes = new Map<string, FileMark>();
    const measured = await measureUsage(this.paths.root, this.paths.limits.maxFiles ?? Number.POSITIVE_INFINITY, sizes);
    if (usageOverLimit(this.paths, measured) !== null) return this.halt(measured);
    this.base = measured;
    this.sizes = sizes;
    this.touched.clear();
  }

  private halt(usage: Usage): void {
    this.stopped = true;
    this.stop(usageOverLimit(this.paths, usage, 'holds')!);
  }
}
