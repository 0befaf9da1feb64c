/**
 * The activation sandbox (spec "Activation state", "Activation record", Authentication rule 8): registration and
 * assertion exchange, the probe (stable, no secret, HEAD), each of the three denials on every route class in every
 * state (walking the one policy table and the published contract), provider binding (first account kept, cleanup job
 * cancelled), the claim, the anonymous cleanup and the end of the 30 days, both by the clock.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { ManualClock } from '../../../platform/clock.ts';
import { CLASS_DECISIONS, SANDBOX_RULES } from '../activation/index.ts';
import { classify, decide } from '../activation/policy.ts';
import { sandboxDenialCode } from '../media-buying-errors.ts';
import {
  envelopeData,
  envelopeError,
  type MediaBuyingHarness,
  STRONG_PASSWORD,
  startMediaBuying,
} from './support/harness.ts';

const DAY = 86_400_000;

/** A request for each rule of the policy table (a prefix rule gets a route under it; `null`: no route in part 2). */
function sampleOf(path: string, advertiserId: string): { method: string; url: string } | null {
  switch (path) {
    case '/api/v2/buyer/advertisers/:advertiserId/*':
      return { method: 'GET', url: `/api/v2/buyer/advertisers/${advertiserId}/campaigns` };
    case '/api/v2/storefront/*':
      return { method: 'GET', url: '/api/v2/storefront/storefronts' };
    case '/mcp/*':
      return null; // MCP endpoints arrive with part 3
    default:
      return { method: '', url: path.replace(':advertiserId', advertiserId) };
  }
}

/** The status an unbound registration gets on a granted read: the route's own rules still apply. */
function unboundGrantStatus(path: string): number {
  if (path.includes('/measurement-engine/')) return 403; // an alpha: no organization is opted in
  if (path.includes(':advertiserId')) return 404; // the demo account's advertiser is another tenant's
  return 200;
}

/**
 * A granted read of an unbound registration: allowed by the sandbox, and the route's own rules still apply (an alpha,
 * another tenant's advertiser).
 */
function assertUnboundGrant(
  res: { statusCode: number; body: string; json(): unknown },
  method: string,
  path: string,
) {
  const expected = unboundGrantStatus(path);
  assert.equal(res.statusCode, expected, `${method} ${path}: ${res.body}`);
  if (expected === 403 && method === 'GET') assert.equal(envelopeError(res).code, 'ALPHA_OPT_IN_REQUIRED');
}

describe('media buying part 2: the activation sandbox', () => {
  let h: MediaBuyingHarness;
  const clock = new ManualClock(new Date('2026-11-24T12:00:00Z'));
  const probe = (token: string, method: 'GET' | 'HEAD' = 'GET') =>
    h.bearer(token, { method, url: '/api/v2/buyer/activation' });
  const jobCount = async (activationId: string) => {
    const pool = h.platform.booted.services.get('media-buying')!.ctx.pool;
    const { rows } = await pool.query('select id from graphile_worker.jobs where key = $1', [
      `media-buying:activation-cleanup:${activationId}`,
    ]);
    return rows as { id: string }[];
  };

  async function enrol(name = 'Test agent') {
    const registered = await h.call({
      method: 'POST',
      url: '/api/v2/activation/registrations',
      payload: { agentName: name },
    });
    assert.equal(registered.statusCode, 201, registered.body);
    const { assertion } = envelopeData<{ assertion: string }>(registered);
    const exchanged = await h.call({
      method: 'POST',
      url: '/api/v2/activation/token',
      payload: { assertion },
    });
    assert.equal(exchanged.statusCode, 200, exchanged.body);
    return {
      assertion,
      ...envelopeData<{ accessToken: string; activationId: string; claimCode: string; state: string }>(
        exchanged,
      ),
    };
  }

  before(async () => {
    h = await startMediaBuying({ clock });
  });
  after(() => h?.close());

  test('registration and exchange: an mbr_ credential in unbound_free; the assertion is single use and short-lived', async () => {
    const agent = await enrol();
    assert.match(agent.accessToken, /^mbr_/);
    assert.match(agent.claimCode, /^mbc_/);
    assert.equal(agent.state, 'unbound_free');
    const reused = await h.call({
      method: 'POST',
      url: '/api/v2/activation/token',
      payload: { assertion: agent.assertion },
    });
    assert.equal(reused.statusCode, 401);
    const tampered = await h.call({
      method: 'POST',
      url: '/api/v2/activation/token',
      payload: { assertion: `${agent.assertion.slice(0, -4)}AAAA` },
    });
    assert.equal(tampered.statusCode, 401);
    const late = envelopeData<{ assertion: string }>(
      await h.call({
        method: 'POST',
        url: '/api/v2/activation/registrations',
        payload: { agentName: 'Late' },
      }),
    );
    clock.advance(11 * 60_000);
    const expired = await h.call({
      method: 'POST',
      url: '/api/v2/activation/token',
      payload: { assertion: late.assertion },
    });
    assert.equal(expired.statusCode, 401);
    assert.equal(envelopeError(expired).code, 'UNAUTHORIZED');
  });

  test('the probe: the activation record, identical across retries, never a secret; HEAD has no body', async () => {
    const agent = await enrol();
    const first = await probe(agent.accessToken);
    assert.equal(first.statusCode, 200, first.body);
    const record = envelopeData<Record<string, unknown>>(first);
    assert.deepEqual(Object.keys(record).sort(), [
      'account',
      'activationId',
      'allowance',
      'expiresAt',
      'schemaVersion',
      'state',
      'workloadId',
    ]);
    assert.equal(record.state, 'unbound_free');
    assert.equal(record.account, null);
    assert.equal(record.activationId, agent.activationId);
    assert.equal(record.expiresAt, new Date(clock.nowMs() + 30 * DAY).toISOString());
    const allowance = record.allowance as { ttlDays: number; grants: string[]; spendCap: { amount: number } };
    assert.equal(allowance.ttlDays, 30);
    assert.equal(allowance.spendCap.amount, 0);
    assert.ok(allowance.grants.includes('POST /api/v2/buyer/activation/provider-binding'));
    clock.advance(60_000);
    const again = await probe(agent.accessToken);
    assert.equal(again.body, first.body);
    assert.ok(!first.body.includes('mbr_') && !first.body.includes('mbc_'));
    const head = await probe(agent.accessToken, 'HEAD');
    assert.equal(head.statusCode, 200);
    assert.equal(head.body, '');
    assert.equal(head.headers['content-length'], first.headers['content-length']);
    // Not a sandbox credential: the probe is refused.
    const key = await h.bearer(h.demo.apiKey, { url: '/api/v2/buyer/activation' });
    assert.equal(key.statusCode, 403);
    assert.equal(envelopeError(key).details?.reason, 'activation_credential_required');
  });

  /** Walks the policy table and the fallbacks for `token`: each class answers as the table says. */
  async function walk(token: string, state: string) {
    const checked: string[] = [];
    const expect = async (method: string, url: string, routeClass: keyof typeof CLASS_DECISIONS) => {
      const res = await h.bearer(token, {
        method: method as 'GET',
        url,
        ...(method === 'GET' ? {} : { payload: {} }),
      });
      const decision = CLASS_DECISIONS[routeClass];
      if (decision === 'allow') {
        // An allowed route still applies its other rules: the measurement-engine lists are an alpha feature the
        // account is not opted into (an unbound registration acts in no account at all); one advertiser of the demo
        // account is another tenant's until the registration is claimed into it.
        if (url.includes('/measurement-engine/')) {
          assert.equal(res.statusCode, 403, `${state} ${method} ${url}: ${res.body}`);
          if (method !== 'HEAD')
            assert.equal(envelopeError(res).code, 'ALPHA_OPT_IN_REQUIRED', `${state} ${url}`);
        } else if (url.startsWith('/api/v2/buyer/advertisers/') && state !== 'customer_bound') {
          assert.equal(res.statusCode, 404, `${state} ${method} ${url}: ${res.body}`);
        } else {
          assert.equal(res.statusCode, 200, `${state} ${method} ${url}: ${res.body}`);
        }
      } else {
        assert.equal(res.statusCode, 403, `${state} ${method} ${url}: ${res.body}`);
        const error = envelopeError(res);
        assert.equal(error.code, sandboxDenialCode(decision), `${state} ${method} ${url}`);
        assert.deepEqual(error.details, { activationState: state, routeClass });
      }
      checked.push(`${method} ${url}`);
    };
    for (const rule of SANDBOX_RULES) {
      if (rule.class === 'provider_binding') continue; // exercised on its own
      const sample = sampleOf(rule.path, h.demo.advertiserId);
      if (!sample) continue;
      const methods =
        rule.method === '*' ? [sample.method] : rule.method === 'GET' ? ['GET', 'HEAD'] : [rule.method];
      for (const m of methods) await expect(m, sample.url, rule.class);
    }
    // The fallbacks: any other mutation, any unlisted read, a seller mutation.
    await expect('POST', '/api/v2/buyer/advertisers', 'mutation');
    await expect('POST', '/api/v2/buyer/discovery/new/discover-products', 'mutation');
    await expect('POST', '/api/v2/buyer/human-feedback', 'mutation');
    await expect('DELETE', '/api/v2/user-api-keys/uak_x', 'mutation');
    await expect('GET', '/api/v2/user-api-keys', 'other_tenant');
    await expect('GET', '/api/v2/buyer/campaigns', 'other_tenant');
    await expect('POST', '/api/v2/storefront/storefronts', 'other_tenant');
    await expect('POST', '/api/v2/buyer/media-buys', 'spend');
    await expect('GET', '/api/v2/buyer/media-buys', 'other_tenant');
    await expect('POST', '/api/v2/buyer/advertiser-accounts', 'mutation');
    return checked;
  }

  test('every state: the three denials on every route class, from the one policy table; reads allowed', async () => {
    const agent = await enrol('Walker');
    const unbound = await walk(agent.accessToken, 'unbound_free');
    assert.ok(unbound.length >= 25, unbound.join('\n'));
    // Unbound: the granted reads see an empty tenancy.
    const advertisers = (await h.bearer(agent.accessToken, { url: '/api/v2/buyer/advertisers' })).json() as {
      data: unknown[];
      meta: { pagination: { total: number } };
    };
    assert.deepEqual([advertisers.data, advertisers.meta.pagination.total], [[], 0]);

    // Binding needs a connected provider account.
    const none = await h.bearer(agent.accessToken, {
      method: 'POST',
      url: '/api/v2/buyer/activation/provider-binding',
    });
    assert.equal(none.statusCode, 409);
    assert.equal(envelopeError(none).details?.reason, 'no_provider_account_connected');
    assert.equal((await jobCount(agent.activationId)).length, 1, 'the anonymous cleanup is scheduled');
    for (const providerAccountId of ['first-acct', 'second-acct']) {
      const res = await h.ops({
        method: 'POST',
        url: `/_ops/activations/${agent.activationId}/provider-connections`,
        payload: { provider: 'simulated-ads', providerAccountId },
      });
      assert.equal(res.statusCode, 200, res.body);
    }
    const bound = await h.bearer(agent.accessToken, {
      method: 'POST',
      url: '/api/v2/buyer/activation/provider-binding',
    });
    assert.equal(bound.statusCode, 200, bound.body);
    const record = envelopeData<{
      state: string;
      account: { providerAccount: { providerAccountId: string } };
    }>(bound);
    assert.equal(record.state, 'bound_free');
    assert.equal(record.account.providerAccount.providerAccountId, 'first-acct');
    assert.equal((await jobCount(agent.activationId)).length, 0, 'binding cancels the anonymous cleanup');
    const pool = h.platform.booted.services.get('media-buying')!.ctx.pool;
    const kept = await pool.query(
      `select c.provider_account_id from media_buying.activation_provider_connections c
       join media_buying.agent_registrations r on r.id = c.registration_id where r.public_id = $1`,
      [agent.activationId],
    );
    assert.deepEqual(kept.rows, [{ provider_account_id: 'first-acct' }]);
    const twice = await h.bearer(agent.accessToken, {
      method: 'POST',
      url: '/api/v2/buyer/activation/provider-binding',
    });
    assert.equal(twice.body, bound.body);
    await walk(agent.accessToken, 'bound_free');

    // The claim: a wrong code is 404; an active member of a Buyer Account claims it.
    const owner = await h.signIn(h.demo.email, h.demo.password);
    const claim = (cookie: string, claimCode: string) =>
      h.session(cookie, {
        method: 'POST',
        url: '/api/v2/buyer/activation/claim',
        payload: { activationId: agent.activationId, claimCode },
      });
    assert.equal((await claim(owner, 'mbc_wrong')).statusCode, 404);
    const claimed = await claim(owner, agent.claimCode);
    assert.equal(claimed.statusCode, 200, claimed.body);
    const customer = envelopeData<{ state: string; account: { buyerAccountId: string } }>(claimed);
    assert.equal(customer.state, 'customer_bound');
    assert.equal(customer.account.buyerAccountId, h.demo.organizationId);
    // Attached to that account: its advertisers are readable; still no nested advertiser route, write or spend.
    const listed = envelopeData<{ id: string }[]>(
      await h.bearer(agent.accessToken, { url: '/api/v2/buyer/advertisers' }),
    );
    assert.deepEqual(
      listed.map((a) => a.id),
      [h.demo.advertiserId],
    );
    await walk(agent.accessToken, 'customer_bound');
    // Once the account is opted into the alpha, the claimed registration reads its measurement-engine lists.
    await h.ops({
      method: 'PUT',
      url: `/_ops/organizations/${h.demo.organizationId}/alpha/measurement-engine`,
    });
    for (const kind of ['studies', 'event-sources']) {
      const res = await h.bearer(agent.accessToken, { url: `/api/v2/buyer/measurement-engine/${kind}` });
      assert.equal(res.statusCode, 200, res.body);
    }
    // Another account cannot take it over; the same account claiming again gets the record.
    const other = await h.createOrganization('buyer', 'Other Buyer');
    await h.addMember(other, 'other-claimer@example.com', 'admin');
    const otherCookie = await h.signInAccepted('other-claimer@example.com', STRONG_PASSWORD);
    assert.equal((await claim(otherCookie, agent.claimCode)).statusCode, 409);
    assert.equal((await claim(owner, agent.claimCode)).statusCode, 200);
  });

  test('every operation of /openapi.json answers an mbr_ credential as the policy table classifies it', async () => {
    // Params match by position, whatever the route names them.
    assert.equal(classify('GET', '/api/v2/buyer/advertisers/:id/campaigns').class, 'nested_advertiser');
    assert.equal(classify('DELETE', '/api/v2/buyer/advertisers/:a/accounts/:b').class, 'nested_advertiser');
    assert.equal(classify('GET', '/api/v2/buyer/advertisers/:id').class, 'read');
    const agent = await enrol('Every route');
    const doc = (await h.call({ url: '/openapi.json' })).json() as {
      paths: Record<string, Record<string, { security?: unknown[] }>>;
    };
    const sandboxCodes = new Set(
      (['write', 'foreign_tenancy', 'spend'] as const).map((d) => sandboxDenialCode(d)),
    );
    const walked: string[] = [];
    for (const [path, operations] of Object.entries(doc.paths)) {
      if (path.startsWith('/_ops/')) continue; // the operator's credential, not a customer's
      for (const [lower, operation] of Object.entries(operations)) {
        if (lower === 'head' || (Array.isArray(operation.security) && operation.security.length === 0))
          continue;
        const method = lower.toUpperCase();
        const pattern = path.replace(/\{(\w+)\}/g, ':$1');
        const { decision, routeClass } = decide('unbound_free', method, pattern);
        const res = await h.bearer(agent.accessToken, {
          method: method as 'GET',
          url: path.replace(/\{(\w+)\}/g, 'x_probe'),
          ...(method === 'GET' || method === 'DELETE' ? {} : { payload: {} }),
        });
        const label = `${method} ${path}: ${res.body}`;
        if (decision === 'allow') {
          assert.ok(res.statusCode < 500, label);
          const code = res.statusCode < 400 ? '' : (envelopeError(res).code ?? '');
          assert.ok(!sandboxCodes.has(code), label);
        } else {
          assert.equal(res.statusCode, 403, label);
          assert.equal(envelopeError(res).code, sandboxDenialCode(decision), label);
          assert.deepEqual(
            envelopeError(res).details,
            { activationState: 'unbound_free', routeClass },
            label,
          );
        }
        walked.push(`${method} ${path}`);
      }
    }
    assert.ok(walked.length >= 60, walked.join('\n'));
  });

  test('the well-known contract and /auth.md are generated from the enforced table and agree with the routes', async () => {
    const agent = await enrol('Reader');
    const doc = (await h.call({ url: '/.well-known/buyer-activation.json' })).json() as {
      grants: { methods: string[]; path: string }[];
      prohibitions: { methods: string[]; path: string; code: string; routeClass: string }[];
      trial: { ttlDays: number };
      identityProvider: { registrationEndpoint: string; tokenEndpoint: string };
      bindingEndpoint: { url: string };
    };
    assert.equal(doc.trial.ttlDays, 30);
    assert.ok(doc.identityProvider.tokenEndpoint.endsWith('/api/v2/activation/token'));
    assert.ok(doc.bindingEndpoint.url.endsWith('/api/v2/buyer/activation/provider-binding'));
    const reads = doc.grants
      .filter((g) => !g.methods.includes('POST')) // the binding, checked above
      .flatMap((g) => g.methods.map((method) => ({ method, path: g.path })));
    for (const { method, path } of reads) {
      const res = await h.bearer(agent.accessToken, {
        method: method as 'GET',
        url: path.replace(':advertiserId', h.demo.advertiserId),
      });
      assertUnboundGrant(res, method, path);
    }
    let called = 0;
    for (const p of doc.prohibitions) {
      const sample =
        p.path === '*'
          ? {
              method: p.methods[0]!,
              url:
                p.methods[0] === 'GET'
                  ? '/api/v2/organizations/current/members'
                  : '/api/v2/buyer/test-cohorts',
            }
          : sampleOf(p.path, h.demo.advertiserId);
      if (!sample) continue;
      const method = p.methods[0] === '*' ? sample.method : p.methods[0]!;
      const res = await h.bearer(agent.accessToken, {
        method: method as 'GET',
        url: sample.url,
        ...(method === 'GET' ? {} : { payload: {} }),
      });
      assert.equal(res.statusCode, 403, `${method} ${sample.url}`);
      assert.equal(envelopeError(res).code, p.code, `${method} ${sample.url}`);
      called += 1;
    }
    assert.ok(called >= 5);
    const guide = await h.call({ url: '/auth.md' });
    assert.match(String(guide.headers['content-type']), /^text\/markdown/);
    for (const code of [
      'UNBOUND_FREE_WRITE_PROHIBITED',
      'UNBOUND_FREE_FOREIGN_TENANCY_PROHIBITED',
      'UNBOUND_FREE_SPEND_PROHIBITED',
    ])
      assert.ok(guide.body.includes(code), code);
    for (const grant of doc.grants) assert.ok(guide.body.includes(grant.path), grant.path);
  });

  test('by the clock: an abandoned unbound sandbox is removed after 7 days; every credential ends after 30', async () => {
    clock.advance(61_000); // a new window of the per-address registration limit (10 a minute)
    const abandoned = await enrol('Abandoned');
    const kept = await enrol('Kept');
    // A claimed (customer_bound) credential ends with the allowance too.
    const customer = await enrol('Customer');
    const owner = await h.signIn(h.demo.email, h.demo.password);
    const claimed = await h.session(owner, {
      method: 'POST',
      url: '/api/v2/buyer/activation/claim',
      payload: { activationId: customer.activationId, claimCode: customer.claimCode },
    });
    assert.equal(envelopeData<{ state: string }>(claimed).state, 'customer_bound');
    await h.ops({
      method: 'POST',
      url: `/_ops/activations/${kept.activationId}/provider-connections`,
      payload: { provider: 'simulated-ads', providerAccountId: 'kept' },
    });
    await h.bearer(kept.accessToken, { method: 'POST', url: '/api/v2/buyer/activation/provider-binding' });
    const start = clock.nowMs();
    // The job's time is the database's: bring it forward; the handler decides by the service clock.
    const pool = h.platform.booted.services.get('media-buying')!.ctx.pool;
    const due = async () => {
      const jobs = await jobCount(abandoned.activationId);
      if (jobs.length)
        await pool.query('select graphile_worker.reschedule_jobs($1::bigint[], run_at => now())', [
          jobs.map((j) => j.id),
        ]);
      await h.platform.runDueJobs();
    };
    clock.set(start + 6 * DAY);
    await due();
    assert.equal((await probe(abandoned.accessToken)).statusCode, 200, 'not abandoned before 7 days');
    // Run too early by the service clock, the cleanup scheduled itself again under its key (no job added here).
    const again = await pool.query(
      'select run_at from graphile_worker.jobs where key = $1 and attempts = 0 and locked_at is null',
      [`media-buying:activation-cleanup:${abandoned.activationId}`],
    );
    assert.equal(again.rows.length, 1, 'the early cleanup re-enqueued itself');
    assert.ok((again.rows[0] as { run_at: Date }).run_at.getTime() >= start + 7 * DAY);
    clock.set(start + 7 * DAY);
    await due();
    assert.equal((await probe(abandoned.accessToken)).statusCode, 401, 'removed after 7 days unbound');
    assert.equal((await probe(kept.accessToken)).statusCode, 200);
    clock.set(start + 30 * DAY - 1000);
    assert.equal((await probe(kept.accessToken)).statusCode, 200);
    assert.equal((await probe(customer.accessToken)).statusCode, 200);
    clock.set(start + 30 * DAY);
    const ended = await probe(kept.accessToken);
    assert.equal(ended.statusCode, 401);
    assert.equal(envelopeError(ended).code, 'UNAUTHORIZED');
    const customerEnded = await probe(customer.accessToken);
    assert.equal(customerEnded.statusCode, 401, 'customer_bound ends after 30 days as well');
    assert.equal(envelopeError(customerEnded).code, 'UNAUTHORIZED');
  });

  test('the hourly prune deletes anonymous enrolments never exchanged a day after their assertion expired', async () => {
    const pool = h.platform.booted.services.get('media-buying')!.ctx.pool;
    clock.advance(61_000); // a new window of the per-address registration limit (10 a minute)
    const exchanged = await enrol('Exchanged');
    const abandoned = await h.call({
      method: 'POST',
      url: '/api/v2/activation/registrations',
      payload: { agentName: 'Never exchanged' },
    });
    assert.equal(abandoned.statusCode, 201, abandoned.body);
    const names = async () =>
      (
        (
          await pool.query(
            `select agent_name from media_buying.activation_enrolments
             where agent_name in ('Exchanged', 'Never exchanged') order by agent_name`,
          )
        ).rows as { agent_name: string }[]
      ).map((r) => r.agent_name);
    const prune = async () => {
      await pool.query(
        `select graphile_worker.add_job('media-buying:prune-discovery-and-enrolments', '{}'::json)`,
      );
      await h.platform.runDueJobs();
    };
    await prune();
    assert.deepEqual(await names(), ['Exchanged', 'Never exchanged']);
    clock.advance(600_000 + DAY + 1000);
    await prune();
    assert.deepEqual(await names(), ['Exchanged']);
    assert.ok(exchanged.activationId);
  });

  test('claim: straight from unbound_free cancels the cleanup; no account created or admitted; only an active member of an admitted Buyer Account', async () => {
    const pool = h.platform.booted.services.get('media-buying')!.ctx.pool;
    clock.advance(61_000); // a new window of the per-address registration limit (10 a minute)
    const agent = await enrol('Claimed unbound');
    assert.equal((await jobCount(agent.activationId)).length, 1);
    const claim = (cookie: string) =>
      h.session(cookie, {
        method: 'POST',
        url: '/api/v2/buyer/activation/claim',
        payload: { activationId: agent.activationId, claimCode: agent.claimCode },
      });
    const organizations = async () =>
      (
        await pool.query(
          'select public_id, kind, status, admitted_at from media_buying.organizations order by id',
        )
      ).rows as unknown[];

    // A member of a Seller Account is refused (the claim is a buyer function).
    const seller = await h.createOrganization('seller', 'Claiming Seller');
    await h.addMember(seller, 'seller-claimer@example.com', 'admin');
    const sellerCookie = await h.signInAccepted('seller-claimer@example.com', STRONG_PASSWORD);
    const bySeller = await claim(sellerCookie);
    assert.equal(bySeller.statusCode, 403, bySeller.body);
    // A member of a Buyer Account not admitted yet is refused.
    const pending = await h.createOrganization('buyer', 'Pending Buyer', false);
    await h.addMember(pending, 'pending-claimer@example.com', 'admin');
    const pendingCookie = await h.signInAccepted('pending-claimer@example.com', STRONG_PASSWORD);
    const byPending = await claim(pendingCookie);
    assert.equal(byPending.statusCode, 403, byPending.body);
    assert.equal((await probe(agent.accessToken)).json().data.state, 'unbound_free');
    assert.equal(
      (await jobCount(agent.activationId)).length,
      1,
      'refused claims leave the cleanup scheduled',
    );

    // An active member (not an administrator) of an admitted Buyer Account claims it.
    const before = await organizations();
    await h.addMember(h.demo.organizationId, 'plain-member@example.com', 'member');
    const memberCookie = await h.signInAccepted('plain-member@example.com', STRONG_PASSWORD);
    const claimed = await claim(memberCookie);
    assert.equal(claimed.statusCode, 200, claimed.body);
    assert.equal(envelopeData<{ state: string }>(claimed).state, 'customer_bound');
    assert.deepEqual(await organizations(), before, 'no account created or admitted');
    assert.equal((await jobCount(agent.activationId)).length, 0, 'the claim cancels the anonymous cleanup');
  });
});
