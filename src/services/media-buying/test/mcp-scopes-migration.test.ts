/**
 * Migration `*_mcp_credential_scopes` on a database that has connections of the past: grants and codes with the
 * scope names of one per endpoint (`adcp:buyer`, `adcp:storefront`, `adcp:creative`, `adcp:admin`) and credentials
 * without a scope of their own. After it, buyer and storefront connections hold `adcp:read adcp:write` (they had every
 * tool), creative and admin connections `adcp:read` (their endpoints have no mutating tool), and every access and
 * refresh credential carries its grant's scope.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { createTestDatabase, type TestDatabase } from '../../../../test/support/platform.ts';
import { type Database, openDatabase, runMigrations } from '../../../platform/database.ts';

const SCHEMA = 'media_buying';
const FOLDER = path.join(import.meta.dirname, '..', 'db', 'migrations');
/** The migration under test, by name (its number may change when branches merge). */
const MIGRATION = '_mcp_credential_scopes';

describe('media buying: migration of MCP connections to adcp:read / adcp:write', () => {
  let database: TestDatabase;
  let opened: Database;
  let beforeMigration: string;

  before(async () => {
    database = await createTestDatabase();
    opened = openDatabase(database.url, { max: 2 });
    // The committed migrations up to the one under test.
    beforeMigration = await fs.mkdtemp(path.join(os.tmpdir(), 'mb-migrations-'));
    await fs.cp(FOLDER, beforeMigration, { recursive: true });
    const journalPath = path.join(beforeMigration, 'meta', '_journal.json');
    const journal = JSON.parse(await fs.readFile(journalPath, 'utf8')) as { entries: { tag: string }[] };
    const at = journal.entries.findIndex((e) => e.tag.endsWith(MIGRATION));
    assert.ok(at > 0, `*${MIGRATION} is in the journal`);
    journal.entries = journal.entries.slice(0, at);
    await fs.writeFile(journalPath, JSON.stringify(journal));
  });
  after(async () => {
    await opened?.close();
    await database?.drop();
    if (beforeMigration) await fs.rm(beforeMigration, { recursive: true, force: true });
  });

  test('legacy grants, codes and credentials get the new scopes', async () => {
    await runMigrations(opened.pool, [{ schema: SCHEMA, folder: beforeMigration }]);
    const q = (text: string, values: unknown[] = []) => opened.pool.query(text, values);
    const now = new Date();
    const org = await q(
      `insert into ${SCHEMA}.organizations (public_id, kind, name, status, created_at)
       values ('org_m', 'buyer', 'M', 'admitted', $1) returning id`,
      [now],
    );
    const identity = await q(
      `insert into ${SCHEMA}.identities (subject, email, created_at) values ('sub-m', 'm@example.com', $1) returning id`,
      [now],
    );
    const user = await q(
      `insert into ${SCHEMA}.users (public_id, identity_id, email, name, created_at)
       values ('usr_m', $1, 'm@example.com', 'M', $2) returning id`,
      [identity.rows[0].id, now],
    );
    const client = await q(
      `insert into ${SCHEMA}.oauth_clients (client_id, name, redirect_uris, created_at)
       values ('mcpc_m', 'M', '{https://app.example/cb}', $1) returning id`,
      [now],
    );
    const legacy = ['adcp:buyer', 'adcp:storefront', 'adcp:creative', 'adcp:admin'];
    const grants: number[] = [];
    for (const [i, scope] of legacy.entries()) {
      const grant = await q(
        `insert into ${SCHEMA}.mcp_grants (public_id, user_id, oauth_client_id, organization_id, resource, scope,
           first_connected_at)
         values ($1, $2, $3, $4, $5, $6, $7) returning id`,
        [
          `mcg_${i}`,
          user.rows[0].id,
          client.rows[0].id,
          org.rows[0].id,
          `https://x.example/mcp/v3/${i}`,
          scope,
          now,
        ],
      );
      grants.push(grant.rows[0].id);
      await q(
        `insert into ${SCHEMA}.oauth_authorization_codes (code_hash, grant_id, redirect_uri, code_challenge, resource,
           scope, created_at, expires_at)
         values ($1, $2, 'https://app.example/cb', 'c', 'r', $3, $4, $4)`,
        [`code-${i}`, grant.rows[0].id, scope, now],
      );
      for (const table of ['mcp_access_tokens', 'mcp_refresh_tokens'])
        await q(
          `insert into ${SCHEMA}.${table} (key_hash, hint, created_at, grant_id) values ($1, 'hint', $2, $3)`,
          [`${table}-${i}`, now, grant.rows[0].id],
        );
    }

    await runMigrations(opened.pool, [{ schema: SCHEMA, folder: FOLDER }]);

    const expected = ['adcp:read adcp:write', 'adcp:read adcp:write', 'adcp:read', 'adcp:read'];
    for (const [i, grantId] of grants.entries()) {
      const scopes = await q(
        `select (select scope from ${SCHEMA}.mcp_grants where id = $1) as grant,
                (select scope from ${SCHEMA}.oauth_authorization_codes where grant_id = $1) as code,
                (select scope from ${SCHEMA}.mcp_access_tokens where grant_id = $1) as access,
                (select scope from ${SCHEMA}.mcp_refresh_tokens where grant_id = $1) as refresh`,
        [grantId],
      );
      assert.deepEqual(
        scopes.rows[0],
        { grant: expected[i], code: expected[i], access: expected[i], refresh: expected[i] },
        legacy[i],
      );
    }
    // The credential scope is required from now on.
    await assert.rejects(
      q(
        `insert into ${SCHEMA}.mcp_access_tokens (key_hash, hint, created_at, grant_id) values ('n', 'h', $1, $2)`,
        [now, grants[0]],
      ),
      /null value in column "scope"/,
    );
  });
});
