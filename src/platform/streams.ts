/**
 * Long-lived streams (server-sent events and WebSocket), behaving the same in every service:
 *
 * - heartbeats every `heartbeatMs` (an SSE comment line, or the service's own WebSocket message), so proxies keep the
 *   connection and clients notice a dead one;
 * - backpressure: a message is never written past a full buffer. While the socket cannot take more, messages wait in
 *   a bounded queue; a client that lets more than `maxBufferedBytes` pile up is dropped (`slow-consumer`), never
 *   buffered without bound;
 * - closed at shutdown (Fastify `preClose`: `shutdown`), when the stream's credential is revoked on any instance
 *   (`revoked`, through the credential kit's `watch`), and released when the client goes away;
 * - replay from a cursor is the feed's part ({@link ChangeFeed.subscribeFrom} in `change-feed.ts`): a stream sends
 *   each change with its id (`id:` in SSE), so a client reconnects with `Last-Event-ID`.
 *
 * SSE framing follows the WHATWG HTML standard, section 9.2 (server-sent events); WebSocket close codes RFC 6455
 * section 7.4 (1001 going away, 1008 policy violation, 1013 try again later).
 */
import websocket, { type WebsocketPluginOptions } from '@fastify/websocket';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { WebSocket } from 'ws';
import type { ServiceApp } from './http.ts';

/** Why a stream ended. */
export type StreamCloseReason = 'client' | 'shutdown' | 'revoked' | 'slow-consumer' | 'server';

/** Settings shared by both kinds of stream. */
export interface StreamOptions {
  /** Milliseconds between heartbeats. */
  heartbeatMs: number;
  /** Bytes a client may leave unread before it is dropped (default 1 MiB). */
  maxBufferedBytes?: number;
  /**
   * Subscribes to the revocation of the stream's credential (`() => store.watch(id, onRevoked)` of the credential
   * kit); returns the unsubscribe function. The stream closes with `revoked` when it fires.
   */
  watchCredential?: (onRevoked: () => void) => () => void;
}

/** One SSE event: `data` is sent as JSON; `id` becomes the client's `Last-Event-ID` on reconnection. */
export interface SseEvent {
  id?: string | number;
  event?: string;
  data: unknown;
}

/** An open stream. */
export interface Stream<M> {
  /**
   * Sends one message (queued while the socket is full). Returns false when the stream is closed, including when
   * this message made the client too slow and it was dropped.
   */
  send(message: M): boolean;
  /** Closes the stream (idempotent). */
  close(reason: StreamCloseReason): void;
  readonly closed: boolean;
  /** Resolves with the reason once the stream is closed. */
  readonly done: Promise<StreamCloseReason>;
}

const DEFAULT_MAX_BUFFERED_BYTES = 1024 * 1024;

/** WebSocket close code and reason text for each way a stream ends (RFC 6455 section 7.4.1). */
const WS_CLOSE: Record<StreamCloseReason, [number, string]> = {
  client: [1000, 'closed'],
  shutdown: [1001, 'server shutting down'],
  revoked: [1008, 'credential revoked'],
  'slow-consumer': [1013, 'client too slow: messages left unread'],
  server: [1011, 'server error'],
};

/** The common life of a stream: heartbeats, the credential watch, the registry entry and `done`. */
abstract class BaseStream<M> implements Stream<M> {
  closed = false;
  readonly done: Promise<StreamCloseReason>;
  private resolveDone!: (reason: StreamCloseReason) => void;
  private readonly heartbeat: NodeJS.Timeout;
  private readonly unwatch: (() => void) | undefined;
  protected readonly maxBufferedBytes: number;

  constructor(
    private readonly registry: Set<BaseStream<unknown>>,
    options: StreamOptions,
  ) {
    this.done = new Promise((resolve) => {
      this.resolveDone = resolve;
    });
    this.maxBufferedBytes = options.maxBufferedBytes ?? DEFAULT_MAX_BUFFERED_BYTES;
    registry.add(this as BaseStream<unknown>);
    this.heartbeat = setInterval(() => this.beat(), options.heartbeatMs);
    this.heartbeat.unref();
    this.unwatch = options.watchCredential?.(() => this.close('revoked'));
  }

  abstract send(message: M): boolean;
  protected abstract beat(): void;
  protected abstract end(reason: StreamCloseReason): void;

  close(reason: StreamCloseReason): void {
    if (this.closed) return;
    this.closed = true;
    clearInterval(this.heartbeat);
    this.unwatch?.();
    this.registry.delete(this as BaseStream<unknown>);
    this.end(reason);
    this.resolveDone(reason);
  }
}

/** A server-sent event stream on a hijacked reply. */
class SseStream extends BaseStream<SseEvent> {
  private readonly queue: string[] = [];
  private queuedBytes = 0;
  private waitingForDrain = false;

  constructor(
    registry: Set<BaseStream<unknown>>,
    private readonly reply: FastifyReply,
    options: StreamOptions & { retryMs?: number },
  ) {
    super(registry, options);
    const raw = reply.raw;
    raw.on('drain', () => this.flush());
    raw.on('close', () => this.close('client'));
    raw.on('error', () => this.close('client'));
    if (options.retryMs !== undefined) this.write(`retry: ${options.retryMs}\n\n`);
  }

  send(message: SseEvent): boolean {
    let frame = '';
    if (message.id !== undefined) frame += `id: ${String(message.id).replace(/[\r\n]/g, '')}\n`;
    if (message.event !== undefined) frame += `event: ${message.event.replace(/[\r\n]/g, '')}\n`;
    for (const line of JSON.stringify(message.data).split('\n')) frame += `data: ${line}\n`;
    return this.write(`${frame}\n`);
  }

  protected beat(): void {
    this.write(': heartbeat\n\n');
  }

  private write(chunk: string): boolean {
    if (this.closed) return false;
    if (this.waitingForDrain) {
      const size = Buffer.byteLength(chunk);
      if (this.queuedBytes + size + this.reply.raw.writableLength > this.maxBufferedBytes) {
        this.close('slow-consumer');
        return false;
      }
      this.queue.push(chunk);
      this.queuedBytes += size;
      return true;
    }
    if (!this.reply.raw.write(chunk)) this.waitingForDrain = true;
    return true;
  }

  private flush(): void {
    this.waitingForDrain = false;
    while (this.queue.length > 0 && !this.closed) {
      const chunk = this.queue.shift()!;
      this.queuedBytes -= Buffer.byteLength(chunk);
      if (!this.reply.raw.write(chunk)) {
        this.waitingForDrain = true;
        return;
      }
    }
  }

  protected end(reason: StreamCloseReason): void {
    this.queue.length = 0;
    this.queuedBytes = 0;
    const raw = this.reply.raw;
    if (reason === 'slow-consumer' || reason === 'client') raw.destroy();
    else raw.end();
  }
}

/** A WebSocket stream sending JSON text frames. */
class WebSocketStream<M> extends BaseStream<M> {
  constructor(
    registry: Set<BaseStream<unknown>>,
    private readonly socket: WebSocket,
    private readonly heartbeatMessage: () => M,
    options: StreamOptions,
  ) {
    super(registry, options);
    socket.on('close', () => this.close('client'));
    socket.on('error', () => this.close('client'));
  }

  send(message: M): boolean {
    if (this.closed || this.socket.readyState !== this.socket.OPEN) return false;
    const text = JSON.stringify(message);
    // ws queues what the socket cannot take yet (bufferedAmount): past the bound the client is dropped.
    if (this.socket.bufferedAmount + Buffer.byteLength(text) > this.maxBufferedBytes) {
      this.close('slow-consumer');
      return false;
    }
    this.socket.send(text);
    return true;
  }

  protected beat(): void {
    this.send(this.heartbeatMessage());
  }

  protected end(reason: StreamCloseReason): void {
    const [code, text] = WS_CLOSE[reason];
    if (reason === 'slow-consumer') {
      // The close frame would wait behind the unread data: end the connection now.
      this.socket.terminate();
      return;
    }
    if (this.socket.readyState === this.socket.OPEN || this.socket.readyState === this.socket.CONNECTING)
      this.socket.close(code, text);
  }
}

/**
 * The open streams of one service app. Creating it registers a `preClose` hook that closes every stream with
 * `shutdown` (SSE responses end, WebSockets get 1001), so a stop never waits on a stream.
 */
export class StreamRegistry {
  private readonly open = new Set<BaseStream<unknown>>();

  constructor(app: ServiceApp) {
    app.addHook('preClose', async () => {
      for (const stream of [...this.open]) stream.close('shutdown');
    });
  }

  /**
   * Registers `@fastify/websocket` on `app` so that at shutdown every WebSocket, a stream or not, gets 1001 "going
   * away" (the plugin's own default closes them without a code) and the WebSocket server closes.
   */
  async registerWebSocket(app: ServiceApp, options: WebsocketPluginOptions['options'] = {}): Promise<void> {
    const closeAll = () => {
      for (const stream of [...this.open]) stream.close('shutdown');
    };
    await app.register(websocket, {
      options,
      preClose(this: FastifyInstance, done: (err?: Error) => void) {
        closeAll();
        const [code, text] = WS_CLOSE.shutdown;
        for (const client of this.websocketServer.clients) client.close(code, text);
        this.websocketServer.close(() => done());
      },
    });
  }

  /** Streams open now. */
  get size(): number {
    return this.open.size;
  }

  /**
   * Turns `reply` into a server-sent event stream: 200 `text/event-stream`, no caching, no proxy buffering, the
   * headers already set on the reply (request id) kept.
   * @param options.retryMs the reconnection delay the client is told (`retry:`), if any.
   */
  sse(
    request: FastifyRequest,
    reply: FastifyReply,
    options: StreamOptions & { retryMs?: number },
  ): Stream<SseEvent> {
    reply.hijack();
    const headers = {
      ...reply.getHeaders(),
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-store',
      connection: 'keep-alive',
      'x-accel-buffering': 'no',
    };
    reply.raw.writeHead(200, headers as Record<string, string>);
    request.log.debug('event stream opened');
    return new SseStream(this.open, reply, options);
  }

  /**
   * Adopts an accepted WebSocket as a stream of JSON messages of type `M`.
   * @param heartbeat the message sent every `options.heartbeatMs`.
   */
  webSocket<M>(socket: WebSocket, heartbeat: () => M, options: StreamOptions): Stream<M> {
    return new WebSocketStream<M>(this.open, socket, heartbeat, options);
  }
}
