/**
 * The mail of staged buyer admission, delivered for real: `MEDIA_BUYING_SMTP_URL` points at an SMTP server on
 * 127.0.0.1 (`smtp-server`), the send job runs (`runDueJobs`), and the messages that arrive are parsed with
 * `mailparser`: the preview receipt, the setup invitation (whose link is then used to join) and a member invitation,
 * each with a text and an HTML part. A server that refuses a recipient leaves the message unsent with its reply.
 */
import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { type ParsedMail, simpleParser } from 'mailparser';
import { SMTPServer } from 'smtp-server';
import {
  json,
  type MediaBuyingHarness,
  STRONG_PASSWORD,
  sessionCookieOf,
  startMediaBuying,
  tokenIn,
  UI_ORIGIN,
} from './support.ts';

/** A message as the SMTP server received it. */
interface Received {
  from: string;
  to: string[];
  parsed: ParsedMail;
}

describe('admission mail through a real SMTP server', () => {
  let h: MediaBuyingHarness;
  let smtp: SMTPServer;
  const inbox: Received[] = [];

  before(async () => {
    smtp = new SMTPServer({
      authOptional: true,
      disabledCommands: ['STARTTLS', 'AUTH'],
      logger: false,
      onRcptTo(address, _session, callback) {
        if (address.address.endsWith('@bounce.example'))
          return callback(Object.assign(new Error('550 5.1.1 mailbox unavailable'), { responseCode: 550 }));
        callback();
      },
      onData(stream, session, callback) {
        const chunks: Buffer[] = [];
        stream.on('data', (chunk: Buffer) => chunks.push(chunk));
        stream.on('end', () => {
          simpleParser(Buffer.concat(chunks))
            .then((parsed) => {
              inbox.push({
                from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
                to: session.envelope.rcptTo.map((r) => r.address),
                parsed,
              });
              callback();
            })
            .catch(callback);
        });
      },
    });
    await new Promise<void>((resolve) => smtp.listen(0, '127.0.0.1', resolve));
    const { port } = smtp.server.address() as AddressInfo;
    h = await startMediaBuying({
      env: {
        MEDIA_BUYING_SMTP_URL: `smtp://127.0.0.1:${port}`,
        MEDIA_BUYING_MAIL_FROM: '"Media Buying" <no-reply@media-buying.test>',
      },
    });
  });
  after(async () => {
    await h.close();
    await new Promise<void>((resolve) => smtp.close(() => resolve()));
  });

  /** The messages received for `address` since the test began. */
  const messagesTo = (address: string) => inbox.filter((m) => m.to.includes(address));

  test('the preview receipt arrives, in text and HTML, saying received and nothing more', async () => {
    const res = await h.send({
      method: 'POST',
      url: '/api/v2/signup/advertiser-preview',
      body: { workEmail: 'ada@acme.example', name: 'Ada', company: 'Acme <script>', message: 'hello' },
    });
    assert.equal(res.statusCode, 202, res.body);
    assert.equal(messagesTo('ada@acme.example').length, 0, 'sent by the job, not in the request');
    await h.platform.runDueJobs();
    const [message] = messagesTo('ada@acme.example');
    assert.ok(message, 'the receipt arrived');
    assert.equal(message.from, 'no-reply@media-buying.test');
    assert.equal(message.parsed.subject, 'We received your details');
    assert.equal(message.parsed.from?.text, '"Media Buying" <no-reply@media-buying.test>');
    assert.match(message.parsed.text ?? '', /We received the details/);
    assert.match(message.parsed.text ?? '', /does not create an account and does not give access/);
    assert.ok(typeof message.parsed.html === 'string' && message.parsed.html.includes('<p>We received'));
    for (const part of [message.parsed.text ?? '', String(message.parsed.html)])
      for (const echoed of ['Acme', 'script', 'hello', 'http'])
        assert.ok(!part.includes(echoed), `the receipt does not contain "${echoed}"`);

    const stored = json(await h.ops('GET', '/_ops/mail?to=ada@acme.example')).mail[0];
    assert.equal(stored.transport, 'smtp');
    assert.equal(stored.sentAt, '2026-11-24T12:00:00.000Z');
    assert.equal(stored.lastError, null);
    // Sent once: running the jobs again sends nothing more.
    await h.platform.runDueJobs();
    assert.equal(messagesTo('ada@acme.example').length, 1);
  });

  test('the setup invitation arrives with its link and offer; the link from the SMTP message joins', async () => {
    const orgId = await h.createOrganization('buyer', 'Acme & Sons', false);
    await h.ops('POST', `/_ops/organizations/${orgId}/admit`);
    const sent = await h.ops('POST', `/_ops/organizations/${orgId}/setup-invitation`, {
      email: 'boss@acme-sons.example',
      name: 'Boss',
      commercialOffer: { title: 'Launch <pricing>', terms: '8% platform fee' },
    });
    assert.equal(sent.statusCode, 201, sent.body);
    await h.platform.runDueJobs();
    const [message] = messagesTo('boss@acme-sons.example');
    assert.ok(message, 'the setup invitation arrived');
    assert.equal(message.parsed.subject, 'Set up Acme & Sons on Media Buying');
    const text = message.parsed.text ?? '';
    const html = String(message.parsed.html);
    const token = tokenIn(text);
    assert.ok(text.includes(`${UI_ORIGIN}/invitations/accept?token=${token}`));
    assert.ok(html.includes(`<a href="${UI_ORIGIN}/invitations/accept?token=${token}">`), html);
    assert.ok(html.includes('Acme &amp; Sons'), 'HTML-escaped organization name');
    assert.ok(html.includes('Launch &lt;pricing&gt;'), 'HTML-escaped offer title');
    assert.match(text, /Joining does not accept it/);
    assert.ok(!text.includes('8% platform fee'), "the offer's terms are read after joining, not mailed");

    const joined = await h.send({
      method: 'POST',
      url: '/api/v2/invitations/accept',
      body: { token, password: STRONG_PASSWORD },
    });
    assert.equal(joined.statusCode, 200, joined.body);
    assert.equal(json(joined).data.role, 'admin');
    assert.equal(json(joined).data.commercialOffer.status, 'pending');

    // The new administrator invites a member; that mail arrives too.
    const boss = sessionCookieOf(joined)!;
    await h.acceptTerms(boss);
    const invited = await h.browser(boss, 'POST', '/api/v2/organizations/current/invitations', {
      email: 'crew@acme-sons.example',
      role: 'member',
    });
    assert.equal(invited.statusCode, 201, invited.body);
    await h.platform.runDueJobs();
    const [memberMail] = messagesTo('crew@acme-sons.example');
    assert.ok(memberMail, 'the member invitation arrived');
    assert.equal(memberMail.parsed.subject, 'You are invited to join Acme & Sons');
    assert.match(
      memberMail.parsed.text ?? '',
      /^Boss invited you to join Acme & Sons on the media-buying platform as a member\./,
    );
    assert.ok(tokenIn(memberMail.parsed.text ?? '') !== token);
  });

  test('a recipient the server refuses: the message stays unsent with the reply, for the job to retry', async () => {
    const res = await h.send({
      method: 'POST',
      url: '/api/v2/signup/advertiser-preview',
      body: { workEmail: 'nobody@bounce.example', name: 'N', company: 'C' },
    });
    assert.equal(res.statusCode, 202, res.body);
    await h.platform.runDueJobs();
    assert.equal(messagesTo('nobody@bounce.example').length, 0);
    const stored = json(await h.ops('GET', '/_ops/mail?to=nobody@bounce.example')).mail[0];
    assert.equal(stored.sentAt, null);
    assert.match(stored.lastError, /550/);
  });
});
