import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import {
  blockedReason,
  OutboundError,
  OutboundHttp,
  outboundFetch,
} from '../../src/platform/outbound-http.ts';

function isOutbound(kind: OutboundError['kind']) {
  return (err: unknown) => err instanceof OutboundError && err.kind === kind;
}

describe('platform: outbound HTTP (SSRF guard, redirects, timeout, body cap)', () => {
  describe('blockedReason', () => {
    const alwaysBlocked: [string, RegExp][] = [
      ['169.254.169.254', /metadata/],
      ['fd00:ec2::254', /metadata/],
      ['100.100.100.200', /metadata/],
      ['::ffff:169.254.169.254', /metadata/],
      ['::ffff:a9fe:a9fe', /metadata/],
      ['100.64.0.1', /carrierGradeNat/],
      ['100.127.255.254', /carrierGradeNat/],
      ['::ffff:100.64.0.1', /carrierGradeNat/],
      ['224.0.0.1', /multicast/],
      ['239.255.255.250', /multicast/],
      ['ff02::1', /multicast/],
      ['0.0.0.0', /unspecified/],
      ['::', /unspecified/],
      ['255.255.255.255', /broadcast/],
      ['192.0.2.1', /reserved/],
      ['64:ff9b::a9fe:a9fe', /address/],
      ['2002:a9fe:a9fe::1', /address/],
    ];
    const privateOnly: [string, RegExp][] = [
      ['127.0.0.1', /loopback/],
      ['127.1.2.3', /loopback/],
      ['::1', /loopback/],
      ['10.0.0.1', /private/],
      ['172.16.0.1', /private/],
      ['172.31.255.255', /private/],
      ['192.168.1.1', /private/],
      ['169.254.1.1', /linkLocal/],
      ['fe80::1', /linkLocal/],
      ['fc00::1', /uniqueLocal/],
      ['fd12:3456::1', /uniqueLocal/],
      ['::ffff:127.0.0.1', /loopback/],
      ['::ffff:10.0.0.1', /private/],
      ['::ffff:192.168.0.1', /private/],
    ];

    test('public unicast addresses are allowed', () => {
      for (const a of [
        '8.8.8.8',
        '1.1.1.1',
        '172.32.0.1',
        '100.63.255.255',
        '2606:4700:4700::1111',
        '::ffff:8.8.8.8',
      ]) {
        assert.equal(blockedReason(a, false), undefined, a);
        assert.equal(blockedReason(a, true), undefined, a);
      }
    });

    test('loopback, private, link-local, IPv6 ULA and IPv4-mapped private addresses are refused by default', () => {
      for (const [a, why] of privateOnly) assert.match(blockedReason(a, false) ?? '', why, a);
    });

    test('allowPrivate permits loopback, private, link-local and ULA ranges', () => {
      for (const [a] of privateOnly) assert.equal(blockedReason(a, true), undefined, a);
    });

    test('cloud metadata, CGNAT, multicast, unspecified, broadcast and reserved are refused even with allowPrivate', () => {
      for (const [a, why] of alwaysBlocked) {
        assert.match(blockedReason(a, false) ?? '', why, `${a} (default)`);
        assert.match(blockedReason(a, true) ?? '', why, `${a} (allowPrivate)`);
      }
    });

    test('unusual IPv4 spellings are classified by value', () => {
      assert.match(blockedReason('2130706433', false) ?? '', /loopback/);
      assert.match(blockedReason('0x7f000001', false) ?? '', /loopback/);
    });

    test('a host name is not an IP address', () => {
      assert.equal(blockedReason('example.com', true), 'not an IP address');
    });
  });

  describe('OutboundHttp.send against a local server', () => {
    let server: http.Server;
    let base: string;
    const hits = new Map<string, number>();
    let lastRequest: { method?: string; ua?: string; custom?: string; body: string } | undefined;

    before(async () => {
      server = http.createServer((req, res) => {
        const url = new URL(req.url ?? '/', 'http://x');
        hits.set(url.pathname, (hits.get(url.pathname) ?? 0) + 1);
        const chunks: Buffer[] = [];
        req.on('data', (c: Buffer) => chunks.push(c));
        req.on('end', () => {
          switch (url.pathname) {
            case '/ok':
              res.writeHead(200, { 'content-type': 'text/plain', 'x-upstream': 'yes' }).end('hello');
              return;
            case '/echo':
              lastRequest = {
                method: req.method,
                ua: req.headers['user-agent'],
                custom: req.headers['x-custom'] as string | undefined,
                body: Buffer.concat(chunks).toString(),
              };
              res.writeHead(201).end('created');
              return;
            case '/redirect':
              res.writeHead(302, { location: `${base}/ok` }).end();
              return;
            case '/status':
              res.writeHead(503).end('down');
              return;
            case '/big':
              res.writeHead(200, { 'content-type': 'application/octet-stream' });
              for (let i = 0; i < 20; i++) res.write(Buffer.alloc(10_000, 97));
              res.end();
              return;
            case '/slow':
              setTimeout(() => res.writeHead(200).end('late'), Number(url.searchParams.get('ms') ?? 0));
              return;
            case '/trickle':
              res.writeHead(200, { 'content-type': 'text/plain' });
              res.write('partial');
              return; // the body never ends
            case '/hang':
              return; // never answers
            default:
              res.writeHead(404).end();
          }
        });
      });
      await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
      base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    });
    after(async () => {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    });

    test('a local server is reached only with allowPrivate', async () => {
      const strict = new OutboundHttp({ allowPrivate: false });
      const local = new OutboundHttp({ allowPrivate: true });
      try {
        const before = hits.get('/ok') ?? 0;
        await assert.rejects(strict.send(`${base}/ok`), isOutbound('blocked_address'));
        assert.equal(hits.get('/ok') ?? 0, before, 'no connection was made');
        const res = await local.send(`${base}/ok`);
        assert.equal(res.status, 200);
        assert.equal(res.body.toString(), 'hello');
        assert.equal(res.headers['x-upstream'], 'yes');
        assert.equal(res.truncated, false);
        assert.ok(res.durationMs >= 0);
        assert.equal(hits.get('/ok'), before + 1);
      } finally {
        await strict.close();
        await local.close();
      }
    });

    test('a host name resolving to a private address is refused at connect time', async () => {
      const strict = new OutboundHttp({ allowPrivate: false });
      try {
        const before = hits.get('/ok') ?? 0;
        const port = new URL(base).port;
        await assert.rejects(strict.send(`http://localhost:${port}/ok`), (err: unknown) => {
          return (
            isOutbound('blocked_address')(err) &&
            /localhost resolves to a loopback address/.test((err as Error).message)
          );
        });
        assert.equal(hits.get('/ok') ?? 0, before);
      } finally {
        await strict.close();
      }
    });

    test('cloud metadata literals are refused before connecting, even with allowPrivate', async () => {
      const local = new OutboundHttp({ allowPrivate: true, timeoutMs: 2000 });
      try {
        for (const url of [
          'http://169.254.169.254/latest/meta-data/',
          'http://[fd00:ec2::254]/',
          'http://[::ffff:169.254.169.254]/',
        ]) {
          await assert.rejects(
            local.send(url),
            (err: unknown) => isOutbound('blocked_address')(err) && /metadata/.test((err as Error).message),
            url,
          );
        }
        await assert.rejects(local.send('http://100.64.0.1/'), isOutbound('blocked_address'));
      } finally {
        await local.close();
      }
    });

    test('only http(s) URLs without credentials are accepted', async () => {
      const client = new OutboundHttp({ allowPrivate: true });
      try {
        for (const url of [
          'not a url',
          'ftp://example.com/x',
          'file:///etc/passwd',
          'gopher://127.0.0.1/',
          `http://user:pass@127.0.0.1:1/`,
        ]) {
          await assert.rejects(client.send(url), isOutbound('invalid_url'), url);
        }
      } finally {
        await client.close();
      }
    });

    test('redirects are returned as they are, never followed', async () => {
      const client = new OutboundHttp({ allowPrivate: true });
      try {
        const before = hits.get('/ok') ?? 0;
        const res = await client.send(`${base}/redirect`);
        assert.equal(res.status, 302);
        assert.equal(res.headers.location, `${base}/ok`);
        assert.equal(hits.get('/ok') ?? 0, before, 'the redirect target was not requested');
      } finally {
        await client.close();
      }
    });

    test('error statuses resolve; method, headers, body and user agent are sent', async () => {
      const client = new OutboundHttp({ allowPrivate: true, userAgent: 'suite-test/1' });
      try {
        assert.equal((await client.send(`${base}/status`)).status, 503);
        const res = await client.send(`${base}/echo`, {
          method: 'POST',
          headers: { 'x-custom': 'v', 'content-type': 'application/json' },
          body: '{"a":1}',
        });
        assert.equal(res.status, 201);
        assert.deepEqual(lastRequest, { method: 'POST', ua: 'suite-test/1', custom: 'v', body: '{"a":1}' });
        await client.send(`${base}/echo`, { headers: { 'user-agent': 'override' } });
        assert.equal(lastRequest?.ua, 'override');
      } finally {
        await client.close();
      }
    });

    test('the body is capped at maxBodyBytes (client default or per request) and marked truncated', async () => {
      const client = new OutboundHttp({ allowPrivate: true, maxBodyBytes: 1000 });
      try {
        const capped = await client.send(`${base}/big`);
        assert.equal(capped.status, 200);
        assert.equal(capped.body.length, 1000);
        assert.equal(capped.truncated, true);
        const perRequest = await client.send(`${base}/big`, { maxBodyBytes: 15_000 });
        assert.equal(perRequest.body.length, 15_000);
        assert.equal(perRequest.truncated, true);
        const whole = await client.send(`${base}/big`, { maxBodyBytes: 200_000 });
        assert.equal(whole.body.length, 200_000);
        assert.equal(whole.truncated, false);
        const exact = await client.send(`${base}/ok`, { maxBodyBytes: 5 });
        assert.equal(exact.body.toString(), 'hello');
        assert.equal(exact.truncated, false);
      } finally {
        await client.close();
      }
    });

    test('a server that does not answer in time is a timeout', async () => {
      const client = new OutboundHttp({ allowPrivate: true, timeoutMs: 5000 });
      try {
        const started = Date.now();
        await assert.rejects(client.send(`${base}/hang`, { timeoutMs: 150 }), (err: unknown) => {
          return isOutbound('timeout')(err) && /150 ms/.test((err as Error).message);
        });
        assert.ok(Date.now() - started < 3000, 'the per-request timeout applied, not the client default');
      } finally {
        await client.close();
      }
    });

    test('a body that stops arriving is a timeout too (the limit covers the whole exchange)', async () => {
      const client = new OutboundHttp({ allowPrivate: true, timeoutMs: 5000 });
      try {
        await assert.rejects(client.send(`${base}/trickle`, { timeoutMs: 200 }), isOutbound('timeout'));
      } finally {
        await client.close();
      }
    });

    test('a client timeout applies by default', async () => {
      const client = new OutboundHttp({ allowPrivate: true, timeoutMs: 150 });
      try {
        await assert.rejects(client.send(`${base}/hang`), isOutbound('timeout'));
      } finally {
        await client.close();
      }
    });

    test('a closed port is a network failure', async () => {
      const probe = http.createServer();
      await new Promise<void>((r) => probe.listen(0, '127.0.0.1', () => r()));
      const port = (probe.address() as AddressInfo).port;
      await new Promise((r) => probe.close(r));
      const client = new OutboundHttp({ allowPrivate: true });
      try {
        await assert.rejects(client.send(`http://127.0.0.1:${port}/`), isOutbound('network'));
      } finally {
        await client.close();
      }
    });

    test('an unresolvable host name is a dns failure', async () => {
      const client = new OutboundHttp({ allowPrivate: false, timeoutMs: 5000 });
      try {
        await assert.rejects(client.send('http://no-such-host.invalid/'), isOutbound('dns'));
      } finally {
        await client.close();
      }
    });

    test('a per-request timeout longer than the client default is honoured', async () => {
      const client = new OutboundHttp({ allowPrivate: true, timeoutMs: 200 });
      try {
        const res = await client.send(`${base}/slow?ms=1500`, { timeoutMs: 4000 });
        assert.equal(res.status, 200);
      } finally {
        await client.close();
      }
    });

    test('outboundFetch: a fetch over the guarded client (method, headers, body; status and headers back; private refused)', async () => {
      const local = new OutboundHttp({ allowPrivate: true });
      const fetchLocal = outboundFetch(local, 2000);
      const res = await fetchLocal(`${base}/echo`, {
        method: 'POST',
        headers: { 'x-custom': 'v' },
        body: JSON.stringify({ a: 1 }),
      });
      assert.equal(res.status, 201);
      assert.equal(await res.text(), 'created');
      assert.deepEqual(
        [lastRequest?.method, lastRequest?.custom, lastRequest?.body],
        ['POST', 'v', '{"a":1}'],
      );
      const ok = await fetchLocal(new URL(`${base}/ok`));
      assert.equal(ok.headers.get('x-upstream'), 'yes');
      const strict = outboundFetch(new OutboundHttp({ allowPrivate: false }), 2000);
      await assert.rejects(strict(`${base}/ok`), isOutbound('blocked_address'));
    });
  });
});
