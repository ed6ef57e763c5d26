/** The window refusals are counted in: a fixed minute from a key's first refusal. */
export const REFUSAL_WINDOW_MS = 60_000;
/** Keys (trigger and address; trigger) held at most: past it the oldest window is dropped (its summary is given first). */
const MAX_KEYS = 10_000;
/** Distinct addresses a summary counts at most. */
const MAX_ADDRESSES = 1_000;
/**
 * Distinct addresses all held windows count at most together: MAX_KEYS windows of MAX_ADDRESSES each
 * would be ten million strings (about a gigabyte) from senders that need no secret, only many addresses.
 */
const MAX_ADDRESSES_HELD = 100_000;

/** The refusals of one trigger's window past those audited one by one: one audit event says them all. */
export interface RefusalSummary {
  trigger: string;
  count: number;
  /** How many of each answer (401, 404, 413, 429, …). */
  statuses: Record<string, number>;
  /** Distinct client addresses among them (at most MAX_ADDRESSES are told apart, fewer while MAX_ADDRESSES_HELD are held). */
  addresses: number;
  from: string;
  to: string;
}

interface ClientWindow {
  start: number;
  count: number;
}

interface TriggerWindow {
  start: number;
  alone: number;
  held: number;
  statuses: Record<string, number>;
  addresses: Set<string>;
}

/**
 * Refused deliveries (no or a bad signature, a body over the limit, an unknown trigger), counted per
 * process so that someone without a trigger's secret cannot make its edge read, check and audit without
 * end (ADR 0039, refused deliveries). Two counts, each in fixed windows of a minute:
 * - per trigger and client address: past `perMinute` refusals, `wait` says how long that client is
 *   answered 429 before its body is read;
 * - per trigger: the first `perMinute` refusals are audited one by one, the rest are held and said in one
 *   summary when the window ends, so a trigger's refusals write at most `perMinute + 1` events a minute
 *   however many addresses send them.
 * No timers and no clock here: the caller gives the time, and asks `sweep` for the windows that ended.
 */
export class RefusalWindows {
  private readonly clients = new Map<string, ClientWindow>();
  private readonly triggers = new Map<string, TriggerWindow>();
  /** The addresses in all of `triggers`' windows (MAX_ADDRESSES_HELD). */
  private addressesHeld = 0;

  constructor(private readonly perMinute: number) {}

  /** 0 when this client's refusals for this trigger are still heard; else the seconds until its window ends (Retry-After). */
  wait(trigger: string, address: string, now: number): number {
    const window = this.clients.get(clientKey(trigger, address));
    if (!window || endedAt(window, now) || window.count < this.perMinute) return 0;
    return Math.max(1, Math.ceil((window.start + REFUSAL_WINDOW_MS - now) / 1000));
  }

  /**
   * Notes a refusal. `ownFault`: the client's request was at fault (it counts toward `wait`); a 429 is not.
   * `alone`: audit it by itself; otherwise it is held for its window's summary. `ended`: summaries of
   * windows that ended (or were dropped to stay within MAX_KEYS) before it, to audit now.
   */
  note(trigger: string, address: string, status: number, ownFault: boolean, now: number): { alone: boolean; ended: RefusalSummary[] } {
    const ended: RefusalSummary[] = [];
    if (ownFault) {
      const key = clientKey(trigger, address);
      const client = this.clients.get(key);
      if (client && !endedAt(client, now)) client.count++;
      else this.put(this.clients, key, { start: now, count: 1 }, ended);
    }
    let window = this.triggers.get(trigger);
    if (!window || endedAt(window, now)) {
      if (window) this.summarise(trigger, window, ended);
      window = { start: now, alone: 0, held: 0, statuses: {}, addresses: new Set() };
      this.put(this.triggers, trigger, window, ended);
    }
    if (window.alone < this.perMinute) {
      window.alone++;
      return { alone: true, ended };
    }
    window.held++;
    window.statuses[status] = (window.statuses[status] ?? 0) + 1;
    if (window.addresses.size < MAX_ADDRESSES && this.addressesHeld < MAX_ADDRESSES_HELD && !window.addresses.has(address)) {
      window.addresses.add(address);
      this.addressesHeld++;
    }
    return { alone: false, ended };
  }

  /** Forgets the windows ended by `now` and gives their summaries (every window's, with `now` Infinity: at shutdown). */
  sweep(now: number): RefusalSummary[] {
    const ended: RefusalSummary[] = [];
    for (const [key, client] of this.clients) if (endedAt(client, now)) this.clients.delete(key);
    for (const [trigger, window] of this.triggers) {
      if (!endedAt(window, now)) continue;
      this.triggers.delete(trigger);
      this.summarise(trigger, window, ended);
    }
    return ended;
  }

  /** Puts a new window under `key`, first dropping the oldest one when the map is full. */
  private put<T extends ClientWindow | TriggerWindow>(map: Map<string, T>, key: string, value: T, ended: RefusalSummary[]): void {
    map.delete(key);
    if (map.size >= MAX_KEYS) {
      const [oldest, window] = map.entries().next().value as [string, T];
      map.delete(oldest);
      if ('held' in window) this.summarise(oldest, window, ended);
    }
    map.set(key, value);
  }

  /** Gives the summary of a window that is being dropped, and its addresses back. */
  private summarise(trigger: string, window: TriggerWindow, into: RefusalSummary[]): void {
    this.addressesHeld -= window.addresses.size;
    if (window.held === 0) return;
    into.push({
      trigger,
      count: window.held,
      statuses: window.statuses,
      addresses: window.addresses.size,
      from: new Date(window.start).toISOString(),
      to: new Date(window.start + REFUSAL_WINDOW_MS).toISOString(),
    });
  }
}

const clientKey = (trigger: string, address: string) => `${trigger} ${address}`;
const endedAt = (window: { start: number }, now: number) => now >= window.start + REFUSAL_WINDOW_MS;
