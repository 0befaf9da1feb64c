/**
 * Concurrent requests never end in a 5xx: each race below gives one winner and the documented refusals (no unique-index
 * violation or deadlock reaches a caller).
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import {
  envelopeData,
  type MediaBuyingHarness,
  STRONG_PASSWORD,
  startMediaBuying,
} from './support/harness.ts';

describe('media buying: races', () => {
  let h: MediaBuyingHarness;
  let cookie: string;

  before(async () => {
    h = await startMediaBuying();
    cookie = await h.signIn(h.demo.email, h.demo.password);
  });
  after(() => h?.close());

  test('concurrent issues of a buyer-agent credential for one agent: one 201, the others 409', async () => {
    const statuses = (
      await Promise.all(
        Array.from({ length: 6 }, () =>
          h.session(cookie, {
            method: 'POST',
            url: '/api/v2/buyer-agent-credentials',
            payload: { agentIdentifier: 'https://racer.example.com' },
          }),
        ),
      )
    ).map((r) => r.statusCode);
    assert.deepEqual(statuses.sort(), [201, 409, 409, 409, 409, 409]);
  });

  test('two administrators demoting each other at once: one wins, the other is refused (409 or 403), never a deadlock', async () => {
    for (let round = 0; round < 3; round++) {
      const org = await h.createOrganization('buyer', `Duel ${round}`);
      const a = await h.addMember(org, `duel-a-${round}@example.com`, 'admin');
      const b = await h.addMember(org, `duel-b-${round}@example.com`, 'admin');
      const aCookie = await h.signInAccepted(`duel-a-${round}@example.com`, STRONG_PASSWORD);
      const bCookie = await h.signInAccepted(`duel-b-${round}@example.com`, STRONG_PASSWORD);
      const demote = (as: string, target: string) =>
        h.session(as, {
          method: 'PATCH',
          url: `/api/v2/organizations/current/members/${target}`,
          payload: { role: 'member' },
        });
      const statuses = (await Promise.all([demote(aCookie, b), demote(bCookie, a)])).map((r) => r.statusCode);
      // The loser is refused as the last administrator (409), or, when its request is checked after the winner's
      // change committed, as no longer an administrator (403).
      assert.equal(statuses.filter((s) => s === 200).length, 1, `round ${round}: ${statuses}`);
      assert.ok(
        statuses.every((s) => s === 200 || s === 409 || s === 403),
        `round ${round}: ${statuses}`,
      );
      const members = envelopeData<{ role: string }[]>(
        await h.session(aCookie, { url: '/api/v2/organizations/current/members' }),
      );
      assert.equal(members.filter((m) => m.role === 'admin').length, 1);
    }
  });

  test('two invitations to one new address accepted at once: one account, the other asked to sign in (401)', async () => {
    const email = 'twice-invited@example.com';
    const tokens: string[] = [];
    for (const name of ['Invite One', 'Invite Two']) {
      const org = await h.createOrganization('buyer', name);
      const sent = await h.ops({
        method: 'POST',
        url: `/_ops/organizations/${org}/setup-invitation`,
        payload: { email },
      });
      assert.equal(sent.statusCode, 201, sent.body);
    }
    const mail = (await h.ops({ url: `/_ops/mail?to=${encodeURIComponent(email)}` })).json() as {
      mail: { text: string }[];
    };
    for (const m of mail.mail) tokens.push(/token=(mbi_[A-Za-z0-9_-]{43})/.exec(m.text)![1]!);
    assert.equal(tokens.length, 2);
    const answers = await Promise.all(
      tokens.map((token) =>
        h.call({
          method: 'POST',
          url: '/api/v2/invitations/accept',
          payload: { token, name: 'Twice', password: STRONG_PASSWORD },
        }),
      ),
    );
    const statuses = answers.map((r) => r.statusCode).sort();
    assert.deepEqual(statuses, [200, 401], answers.map((r) => r.body).join('\n'));
  });
});
