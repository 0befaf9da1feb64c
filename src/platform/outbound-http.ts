import dns from 'node:dns';
import net from 'node:net';
import ipaddr from 'ipaddr.js';
import { Agent, request } from 'undici';

/**
 * Outbound HTTP for every call to a user-supplied URL (webhook deliveries, upstream mirrors), guarded against SSRF:
 * - only `http:` and `https:` URLs, no credentials in the URL;
 * - the destination address must be public unicast: private (RFC 1918, unique-local), loopback, link-local,
 *   carrier-grade NAT, multicast, reserved and unspecified addresses are refused unless `allowPrivate`; cloud
 *   metadata addresses (169.254.169.254, fd00:ec2::254) are refused always. Literal IPs are checked before
 *   connecting and every DNS answer is checked at connect time (so a name cannot rebind to a private address);
 * - redirects are never followed (a 3xx is returned as it is);
 * - `timeoutMs` bounds the whole exchange; the response body is capped at `maxBodyBytes` (the rest is discarded).
 */
export interface OutboundRequest {
  method?: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE' | 'HEAD';
  headers?: Record<string, string>;
  body?: string | Buffer;
  /** Overrides the client's timeout, in milliseconds. */
  timeoutMs?: number;
  /** Overrides the client's response body cap, in bytes. */
  maxBodyBytes?: number;
}

export interface OutboundResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  /** The body, truncated to `maxBodyBytes`. */
  body: Buffer;
  /** True when the body was longer than `maxBodyBytes`. */
  truncated: boolean;
  /** Milliseconds from sending to the end of the (capped) body. */
  durationMs: number;
}

/** Why an outbound call did not produce a response. */
export type OutboundFailure = 'invalid_url' | 'blocked_address' | 'dns' | 'timeout' | 'network';

export class OutboundError extends Error {
  constructor(
    readonly kind: OutboundFailure,
    message: string,
    readonly durationMs = 0,
  ) {
    super(message);
    this.name = 'OutboundError';
  }
}

const METADATA = ['169.254.169.254', 'fd00:ec2::254', '100.100.100.200'];

/**
 * Classifies an IP address: returns undefined when allowed, otherwise the reason it is refused.
 * @param allowPrivate permit private, loopback, link-local and unique-local ranges (local development).
 */
export function blockedReason(address: string, allowPrivate: boolean): string | undefined {
  if (!ipaddr.isValid(address)) return 'not an IP address';
  let ip = ipaddr.parse(address);
  if (ip.kind() === 'ipv6' && (ip as ipaddr.IPv6).isIPv4MappedAddress())
    ip = (ip as ipaddr.IPv6).toIPv4Address();
  const normalized = ip.toNormalizedString();
  if (METADATA.some((m) => ipaddr.parse(m).toNormalizedString() === normalized))
    return 'cloud metadata address';
  const range = ip.range();
  if (range === 'unicast') return undefined;
  const privateRanges = ['private', 'loopback', 'linkLocal', 'uniqueLocal'];
  if (allowPrivate && privateRanges.includes(range)) return undefined;
  return `${range} address`;
}

export interface OutboundHttpOptions {
  allowPrivate: boolean;
  /** Default total timeout in milliseconds (default 15,000). */
  timeoutMs?: number;
  /** Response bytes kept (default 64 KiB). */
  maxBodyBytes?: number;
  /** Sent unless the request sets its own. */
  userAgent?: string;
}

export class OutboundHttp {
  private readonly agent: Agent;
  private readonly timeoutMs: number;
  private readonly maxBodyBytes: number;
  private readonly userAgent: string;

  constructor(private readonly options: OutboundHttpOptions) {
    this.timeoutMs = options.timeoutMs ?? 15_000;
    this.maxBodyBytes = options.maxBodyBytes ?? 64 * 1024;
    this.userAgent = options.userAgent ?? 'api-suite';
    const allowPrivate = options.allowPrivate;
    const guardedLookup = (
      hostname: string,
      opts: dns.LookupOptions,
      callback: (
        err: NodeJS.ErrnoException | null,
        address: string | dns.LookupAddress[],
        family?: number,
      ) => void,
    ) => {
      dns.lookup(hostname, { ...opts, all: true }, (err, addresses) => {
        if (err) return callback(err, '', 0);
        const list = addresses as dns.LookupAddress[];
        for (const a of list) {
          const reason = blockedReason(a.address, allowPrivate);
          if (reason) {
            const e = new Error(`destination ${hostname} resolves to a ${reason}`) as NodeJS.ErrnoException;
            e.code = 'EBLOCKED';
            return callback(e, '', 0);
          }
        }
        if (opts.all) return callback(null, list);
        const first = list[0];
        if (!first)
          return callback(
            Object.assign(new Error(`no address for ${hostname}`), { code: 'ENOTFOUND' }),
            '',
            0,
          );
        return callback(null, first.address, first.family);
      });
    };
    this.agent = new Agent({
      connect: { lookup: guardedLookup as unknown as net.LookupFunction, timeout: this.timeoutMs },
      headersTimeout: this.timeoutMs,
      bodyTimeout: this.timeoutMs,
    } as Agent.Options);
  }

  /**
   * Sends one request. Resolves with any HTTP answer (2xx, 3xx, 4xx, 5xx).
   * @throws OutboundError `invalid_url`, `blocked_address`, `dns`, `timeout` or `network`.
   */
  async send(url: string, req: OutboundRequest = {}): Promise<OutboundResponse> {
    let target: URL;
    try {
      target = new URL(url);
    } catch {
      throw new OutboundError('invalid_url', 'The URL is not valid.');
    }
    if (target.protocol !== 'http:' && target.protocol !== 'https:') {
      throw new OutboundError('invalid_url', 'Only http and https URLs are allowed.');
    }
    if (target.username || target.password)
      throw new OutboundError('invalid_url', 'URLs with credentials are not allowed.');
    const host = target.hostname.replace(/^\[|\]$/g, '');
    if (net.isIP(host)) {
      const reason = blockedReason(host, this.options.allowPrivate);
      if (reason) throw new OutboundError('blocked_address', `Destination is a ${reason}.`);
    }
    const timeoutMs = req.timeoutMs ?? this.timeoutMs;
    const maxBodyBytes = req.maxBodyBytes ?? this.maxBodyBytes;
    const started = performance.now();
    const signal = AbortSignal.timeout(timeoutMs);
    try {
      const res = await request(target, {
        method: req.method ?? 'GET',
        headers: { 'user-agent': this.userAgent, ...(req.headers ?? {}) },
        body: req.body,
        dispatcher: this.agent,
        // The agent's timeouts are the client default; a request's own (longer or shorter) bound wins.
        headersTimeout: timeoutMs,
        bodyTimeout: timeoutMs,
        signal,
      });
      const chunks: Buffer[] = [];
      let size = 0;
      let truncated = false;
      for await (const chunk of res.body) {
        const buf = chunk as Buffer;
        if (size + buf.length > maxBodyBytes) {
          chunks.push(buf.subarray(0, maxBodyBytes - size));
          size = maxBodyBytes;
          truncated = true;
          res.body.destroy();
          break;
        }
        chunks.push(buf);
        size += buf.length;
      }
      return {
        status: res.statusCode,
        headers: res.headers as Record<string, string | string[] | undefined>,
        body: Buffer.concat(chunks),
        truncated,
        durationMs: performance.now() - started,
      };
    } catch (err) {
      const durationMs = performance.now() - started;
      const e = err as NodeJS.ErrnoException & { cause?: NodeJS.ErrnoException };
      const code = e.code ?? e.cause?.code;
      if (code === 'EBLOCKED')
        throw new OutboundError('blocked_address', e.message ?? 'Destination address refused.', durationMs);
      if (
        signal.aborted ||
        code === 'UND_ERR_HEADERS_TIMEOUT' ||
        code === 'UND_ERR_BODY_TIMEOUT' ||
        code === 'UND_ERR_CONNECT_TIMEOUT'
      ) {
        throw new OutboundError('timeout', `No complete answer within ${timeoutMs} ms.`, durationMs);
      }
      if (code === 'ENOTFOUND' || code === 'EAI_AGAIN')
        throw new OutboundError('dns', `Host ${host} could not be resolved.`, durationMs);
      throw new OutboundError('network', `Connection failed (${code ?? 'error'}).`, durationMs);
    }
  }

  async close(): Promise<void> {
    await this.agent.close();
  }
}

/**
 * A WHATWG `fetch` over {@link OutboundHttp.send}, for libraries that take a `fetch` option (the `openai` client): the
 * same SSRF guard, no redirects, `timeoutMs` for the whole exchange, the answer's body capped at `maxBodyBytes`.
 * Request bodies of any `BodyInit` kind are read into memory first. Failures throw {@link OutboundError}.
 */
export function outboundFetch(
  outbound: OutboundHttp,
  timeoutMs: number,
  maxBodyBytes = 1024 * 1024,
): typeof fetch {
  return async (input, init) => {
    const url = typeof input === 'string' ? input : input instanceof URL ? input.href : input.url;
    const headers: Record<string, string> = {};
    new Headers(init?.headers).forEach((value, name) => {
      headers[name] = value;
    });
    const body =
      typeof init?.body === 'string'
        ? init.body
        : init?.body
          ? Buffer.from(await new Response(init.body).arrayBuffer())
          : undefined;
    const res = await outbound.send(url, {
      method: (init?.method ?? 'GET') as 'GET',
      headers,
      body,
      timeoutMs,
      maxBodyBytes,
    });
    const responseHeaders = new Headers();
    for (const [name, value] of Object.entries(res.headers))
      if (value !== undefined) responseHeaders.set(name, Array.isArray(value) ? value.join(', ') : value);
    return new Response(res.status === 204 || res.status === 304 ? null : new Uint8Array(res.body), {
      status: res.status,
      headers: responseHeaders,
    });
  };
}
