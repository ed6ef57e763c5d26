import type { Logger } from '@nestjs/common';
import pg from 'pg';
import type { RunEvent } from '../agent/core/run-events.js';
import { decodeFromWire, encodeForWire } from './wire-event.js';

/** The one channel every replica listens on; the payload names the Task. */
export const CHANNEL = 'oam_task_events';
const RECONNECT_MIN_MS = 100;
const RECONNECT_MAX_MS = 5000;

/**
 * Task events between replicas over PostgreSQL's LISTEN/NOTIFY: no other server. One dedicated client
 * connection listens (a pooled one would be handed back and lose the LISTEN) and also sends, in emit
 * order: NOTIFYs of one session arrive in the order they were sent. When the connection drops it is
 * re-opened with backoff and `onGap` tells followers to catch up from the database; events emitted
 * meanwhile are not queued (the record has them).
 */
export class PgEventChannel {
  private client: pg.Client | null = null;
  private stopped = false;
  private sending: Promise<unknown> = Promise.resolve();
  private retryMs = RECONNECT_MIN_MS;
  private reconnecting: NodeJS.Timeout | null = null;

  constructor(
    private readonly url: string,
    private readonly origin: string,
    private readonly deliver: (event: RunEvent) => void,
    private readonly onGap: () => void,
    private readonly logger: Logger,
  ) {}

  async start(): Promise<void> {
    await this.connect();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.reconnecting) clearTimeout(this.reconnecting);
    await this.sending.catch(() => undefined);
    await this.client?.end().catch(() => undefined);
    this.client = null;
  }

  publish(event: RunEvent): void {
    const payload = encodeForWire(this.origin, event);
    this.sending = this.sending.then(async () => {
      const client = this.client;
      if (!client) return;
      await client
        .query('SELECT pg_notify($1, $2)', [CHANNEL, payload])
        .catch((error: Error) => this.logger.warn(`NOTIFY failed (followers catch up from the database): ${error.message}`));
    });
  }

  private async connect(): Promise<void> {
    const client = new pg.Client({ connectionString: this.url, keepAlive: true, application_name: `oam-events/${process.pid}` });
    client.on('notification', (message) => {
      if (message.channel !== CHANNEL || !message.payload) return;
      const decoded = decodeFromWire(message.payload);
      if (decoded && decoded.origin !== this.origin) this.deliver(decoded.event);
    });
    client.on('error', (error) => this.lost(client, error));
    client.on('end', () => this.lost(client, new Error('connection ended')));
    await client.connect();
    await client.query(`LISTEN ${CHANNEL}`);
    this.client = client;
    this.retryMs = RECONNECT_MIN_MS;
  }

  private lost(client: pg.Client, error: Error): void {
    if (this.stopped || this.client !== client) return;
    this.client = null;
    this.logger.warn(`LISTEN connection lost (${error.message}); reconnecting`);
    client.end().catch(() => undefined);
    this.scheduleReconnect();
  }

  private scheduleReconnect(): void {
    if (this.stopped || this.reconnecting) return;
    const delay = this.retryMs;
    this.retryMs = Math.min(this.retryMs * 2, RECONNECT_MAX_MS);
    this.reconnecting = setTimeout(() => {
      this.reconnecting = null;
      this.connect()
        // Whatever was sent while no one listened here is in the database: followers re-read it.
        .then(() => this.onGap())
        .catch((error: Error) => {
          this.logger.warn(`LISTEN reconnect failed: ${error.message}`);
          this.scheduleReconnect();
        });
    }, delay);
    this.reconnecting.unref();
  }
}
