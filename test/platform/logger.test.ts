import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { after, before, describe, test } from 'node:test';
import { sql } from 'drizzle-orm';
import { drizzle } from 'drizzle-orm/node-postgres';
import pg from 'pg';
import { createLogger } from '../../src/platform/logger.ts';
import { pricingService } from '../../src/services/pricing/index.ts';
import { createTestDatabase, startTestPlatform, type TestDatabase } from '../support/platform.ts';

/** A logger writing to an array of parsed lines. */
function capturingLogger() {
  const lines: string[] = [];
  const sink = new Writable({
    write(chunk, _encoding, done) {
      lines.push(...String(chunk).split('\n').filter(Boolean));
      done();
    },
  });
  return { logger: createLogger('info', sink), lines };
}

describe('platform: log lines never carry secrets', () => {
  let database: TestDatabase;
  let pool: pg.Pool;

  before(async () => {
    database = await createTestDatabase();
    pool = new pg.Pool({ connectionString: database.url });
    await pool.query('create table keys (key_hash text constraint keys_key_hash_unique unique, label text)');
  });
  after(async () => {
    await pool.end();
    await database.drop();
  });

  test('a failed query is logged with its statement, SQLSTATE and constraint, never its parameters or detail', async () => {
    const db = drizzle(pool);
    const secret = 'f3c1b2a9d8e7-secret-hash-value';
    await db.execute(sql`insert into keys (key_hash, label) values (${secret}, ${'first'})`);
    const failure = await db
      .execute(sql`insert into keys (key_hash, label) values (${secret}, ${'second'})`)
      .then(
        () => undefined,
        (err: unknown) => err,
      );
    assert.ok(failure instanceof Error);
    assert.ok(String(failure.message).includes(secret), 'the driver error itself carries the parameter');
    const { logger, lines } = capturingLogger();
    logger.error({ err: failure }, 'request failed');
    logger.error({ error: failure }, 'job failed');
    assert.equal(lines.length, 2);
    for (const line of lines) {
      assert.ok(!line.includes(secret), `no parameter in ${line}`);
      assert.ok(!line.includes('already exists'), 'no PostgreSQL detail (it quotes the values)');
      const fields = JSON.parse(line) as Record<string, { message: string; db: Record<string, string> }>;
      const logged = fields.err ?? fields.error!;
      assert.match(logged.message, /Failed query: insert into keys \(key_hash, label\) values \(\$1, \$2\)/);
      assert.match(logged.message, /params: \[redacted\]/);
      assert.deepEqual(
        { code: logged.db.code, constraint: logged.db.constraint, table: logged.db.table },
        { code: '23505', constraint: 'keys_key_hash_unique', table: 'keys' },
      );
    }
  });

  test('fields named like credentials are redacted, at the top of a line and one level below', () => {
    const { logger, lines } = capturingLogger();
    logger.info(
      {
        apiKey: 'k-1',
        token: 't-1',
        client: { client_secret: 'c-1', authorization: 'Bearer b-1' },
        keyId: 7,
      },
      'event',
    );
    const line = lines[0]!;
    for (const secret of ['k-1', 't-1', 'c-1', 'b-1']) assert.ok(!line.includes(secret), secret);
    assert.equal(JSON.parse(line).keyId, 7, 'other fields are kept');
  });

  test('every test platform checks its own logs: a line holding a seeded key fails the test at close()', async () => {
    const platform = await startTestPlatform({ services: [pricingService] });
    const key = platform.credentials('pricing').readWriteKey as string;
    platform.booted.services.get('pricing')!.ctx.logger.info({ note: `oops ${key}` }, 'a careless line');
    await assert.rejects(platform.close(), /no log line holds the operator token or a seeded key/);
  });
});
