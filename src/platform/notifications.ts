import { sql } from 'drizzle-orm';
import pg from 'pg';
import type { Executor } from './database.ts';
import type { AppLogger } from './logger.ts';

/**
 * Fan-out across instances with PostgreSQL `LISTEN/NOTIFY` (docs/architecture.md, "Scale-out"): a change committed
 * on one instance reaches subscribers (SSE, WebSocket, caches) on every instance. One dedicated connection listens;
 * it reconnects with backoff and re-subscribes after a connection loss.
 *
 * Payloads are strings (PostgreSQL limits them to 8000 bytes): send ids, not documents. A notification sent inside a
 * transaction is delivered only if and when it commits.
 */
export type NotificationHandler = (payload: string) => void;

export class Notifier {
  private client: pg.Client | undefined;
  private readonly handlers = new Map<string, Set<NotificationHandler>>();
  private readonly resyncHandlers = new Set<() => void | Promise<void>>();
  private closed = false;
  private connecting: Promise<void> | undefined;
  private retryMs = 250;
  private lost = false;

  constructor(
    private readonly url: string,
    private readonly logger: AppLogger,
  ) {}

  /** Subscribes `handler` to `channel`; returns the function that unsubscribes it. */
  async listen(channel: string, handler: NotificationHandler): Promise<() => Promise<void>> {
    let set = this.handlers.get(channel);
    const first = !set;
    if (!set) {
      set = new Set();
      this.handlers.set(channel, set);
    }
    set.add(handler);
    await this.ensureConnected();
    if (first && this.client) await this.client.query(`listen ${pg.escapeIdentifier(channel)}`);
    return async () => {
      const current = this.handlers.get(channel);
      if (!current) return;
      current.delete(handler);
      if (current.size === 0) {
        this.handlers.delete(channel);
        await this.client?.query(`unlisten ${pg.escapeIdentifier(channel)}`).catch(() => undefined);
      }
    };
  }

  /**
   * Subscribes `handler` to resynchronisation: it runs after the LISTEN connection was lost and is back, when
   * notifications may have been missed. Returns the function that unsubscribes it.
   */
  onResync(handler: () => void | Promise<void>): () => void {
    this.resyncHandlers.add(handler);
    return () => {
      this.resyncHandlers.delete(handler);
    };
  }

  /** Sends `payload` on `channel` through `executor` (inside its transaction when it is one). */
  static async notify(executor: Executor, channel: string, payload: string): Promise<void> {
    await executor.execute(sql`select pg_notify(${channel}, ${payload})`);
  }

  private async ensureConnected(): Promise<void> {
    if (this.client || this.closed) return;
    this.connecting ??= this.connect().finally(() => {
      this.connecting = undefined;
    });
    await this.connecting;
  }

  private async connect(): Promise<void> {
    const client = new pg.Client({ connectionString: this.url, application_name: 'api-suite-listen' });
    client.on('notification', (msg) => {
      const set = this.handlers.get(msg.channel);
      if (!set) return;
      for (const h of set) {
        try {
          h(msg.payload ?? '');
        } catch (err) {
          this.logger.error({ err, channel: msg.channel }, 'notification handler failed');
        }
      }
    });
    client.on('error', (err) => {
      client.end().catch(() => undefined);
      // Only an established connection is this handler's to replace; a failing connect() is retried by its caller.
      if (this.client !== client) return;
      this.logger.warn({ err }, 'notification connection lost');
      this.client = undefined;
      this.lost = true;
      this.scheduleReconnect();
    });
    try {
      await client.connect();
      for (const channel of this.handlers.keys())
        await client.query(`listen ${pg.escapeIdentifier(channel)}`);
    } catch (err) {
      await client.end().catch(() => undefined);
      throw err;
    }
    if (this.closed) {
      // close() ran while this connection was being made: it must not outlive the notifier.
      await client.end().catch(() => undefined);
      return;
    }
    const reconnected = this.lost;
    this.client = client;
    this.lost = false;
    this.retryMs = 250;
    if (reconnected) {
      for (const h of this.resyncHandlers) {
        Promise.resolve()
          .then(h)
          .catch((err) => this.logger.error({ err }, 'resync handler failed'));
      }
    }
  }

  private scheduleReconnect(): void {
    if (this.closed) return;
    const delay = this.retryMs;
    this.retryMs = Math.min(this.retryMs * 2, 10_000);
    setTimeout(() => {
      this.ensureConnected().catch((err) => {
        this.logger.warn({ err }, 'notification reconnect failed');
        this.scheduleReconnect();
      });
    }, delay).unref();
  }

  async close(): Promise<void> {
    this.closed = true;
    const c = this.client;
    this.client = undefined;
    await c?.end().catch(() => undefined);
  }
}
