/**
 * Test support of text-message lines: a Seller Account with an administrator's key, a storefront, an active line and
 * its phone lines enabled; inbound texts through the signed carrier webhook; the raw rows of the text tables.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { eq, sql } from 'drizzle-orm';
import type { Db } from '../../../platform/database.ts';
import { prefixedHexId } from '../../../platform/ids.ts';
import { storefronts, textInbound, textOutbox } from '../db/schema.ts';
import { json, type MediaBuyingHarness, STRONG_PASSWORD } from './support.ts';

/** A Seller Account ready to text. */
export interface SellerFixture {
  organizationId: string;
  /** Internal id (for direct reads). */
  orgRowId: number;
  adminKey: string;
  cookie: string;
  storefrontId: string;
  storefrontRowId: number;
  lineId: string;
  line: string;
}

let counter = 0;

/** The service's database handle. */
export function dbOf(h: MediaBuyingHarness): Db {
  return h.platform.booted.services.get('media-buying')!.ctx.db;
}

/** Creates a Seller Account with an admin key, a storefront and a line (phone lines enabled unless `enabled` false). */
export async function setupSeller(
  h: MediaBuyingHarness,
  options: { line?: string; enabled?: boolean; storefrontName?: string } = {},
): Promise<SellerFixture> {
  counter += 1;
  const organizationId = await h.createOrganization('seller', `Seller ${counter}`);
  const email = `seller${counter}-${randomUUID().slice(0, 8)}@example.com`;
  await h.addMember(organizationId, email, 'admin');
  const cookie = await h.signIn(email, STRONG_PASSWORD);
  await h.acceptTerms(cookie);
  const keyRes = await h.browser(cookie, 'POST', '/api/v2/user-api-keys', { label: 'texting' });
  assert.equal(keyRes.statusCode, 201, keyRes.body);
  const adminKey = json(keyRes).data.key as string;
  const db = dbOf(h);
  const [org] = (
    await db.execute(sql`select id from media_buying.organizations where public_id = ${organizationId}`)
  ).rows as { id: string }[];
  const orgRowId = Number(org!.id);
  const [storefront] = await db
    .insert(storefronts)
    .values({
      publicId: prefixedHexId('sf'),
      organizationId: orgRowId,
      name: options.storefrontName ?? 'Harbor Media',
      status: 'active',
      currency: 'USD',
      createdAt: h.clock.now(),
    })
    .returning();
  const line = options.line ?? `+1202555${String(1000 + counter).slice(-4)}`;
  const lineRes = await h.ops('POST', '/_ops/text-lines', {
    organizationId,
    number: line,
    storefrontId: storefront!.publicId,
  });
  assert.equal(lineRes.statusCode, 201, lineRes.body);
  if (options.enabled !== false) await switchLines(h, organizationId, true);
  return {
    organizationId,
    orgRowId,
    adminKey,
    cookie,
    storefrontId: storefront!.publicId,
    storefrontRowId: storefront!.id,
    lineId: json(lineRes).id,
    line,
  };
}

/** Turns a Seller Account's phone lines on or off as the operator. @returns the texts handed to the agent. */
export async function switchLines(
  h: MediaBuyingHarness,
  organizationId: string,
  enabled: boolean,
): Promise<number> {
  const res = await h.ops('PUT', `/_ops/organizations/${organizationId}/phone-lines`, { enabled });
  assert.equal(res.statusCode, 200, res.body);
  return json(res).resumed;
}

/** Sends the SMS command with `key`. */
export function sendText(
  h: MediaBuyingHarness,
  key: string,
  body: { requestId?: string; line: string; destination: string; text: string },
  url = '/api/v2/communications/messages',
) {
  return h.bearer(key, 'POST', url, { requestId: body.requestId ?? randomUUID(), ...body });
}

/** Delivers an inbound text through the carrier simulator (signed webhook). */
export async function inbound(
  h: MediaBuyingHarness,
  to: string,
  from: string,
  text: string,
  messageId?: string,
) {
  const res = await h.ops('POST', '/_ops/carrier/inbound', {
    to,
    from,
    text,
    ...(messageId ? { messageId } : {}),
  });
  return res;
}

/** The texts the carrier simulator accepted, as the operator reads them. */
export async function carrierLog(h: MediaBuyingHarness) {
  const res = await h.ops('GET', '/_ops/carrier/messages');
  assert.equal(res.statusCode, 200, res.body);
  return json(res).messages as { to: string; from: string; text: string; channel: string }[];
}

/** The outbox rows of a line as the operator's delivery log lists them (every page), oldest first. */
export async function outboxOf(h: MediaBuyingHarness, lineId: string) {
  type Row = { outboxId: string; status: string; reason: string | null; origin: string; segments: number };
  const rows: Row[] = [];
  for (let skip = 0; ; skip += 200) {
    const res = await h.ops('GET', `/_ops/text-lines/${lineId}/outbox?take=200&skip=${skip}`);
    assert.equal(res.statusCode, 200, res.body);
    rows.push(...(json(res).texts as Row[]));
    if (!json(res).meta.pagination.hasMore) break;
  }
  return rows.reverse();
}

/** The raw inbound row by public id. */
export async function inboundRow(h: MediaBuyingHarness, publicId: string) {
  const [row] = await dbOf(h).select().from(textInbound).where(eq(textInbound.publicId, publicId));
  return row!;
}

/** The raw outbox row by public id. */
export async function outboxRow(h: MediaBuyingHarness, publicId: string) {
  const [row] = await dbOf(h).select().from(textOutbox).where(eq(textOutbox.publicId, publicId));
  return row!;
}

/** Makes every waiting job due now (the queue's wake-ups are in wall time; the rules read the moved clock). */
export async function wakeJobs(h: MediaBuyingHarness): Promise<void> {
  await dbOf(h).execute(sql`update graphile_worker._private_jobs set run_at = now() where locked_at is null`);
}
