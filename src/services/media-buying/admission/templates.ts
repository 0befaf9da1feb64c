/**
 * The mail of staged buyer admission, each as plain text and simple HTML (every interpolated value HTML-escaped):
 *
 * - the advertiser preview receipt: says the details were received and nothing more. It echoes nothing the form
 *   carried (name, company, message): the address is unverified, so the receipt must not carry a stranger's text to
 *   it (the form would otherwise relay spam);
 * - the setup invitation (operator, to an admitted organization's administrator) and the member invitation (an
 *   administrator, to a new member): the organization, the role, the single-use link and its expiry, and, on a
 *   setup invitation with a Commercial Offer, that an offer waits for a decision after joining (its title only).
 *
 * No secret but the invitation link itself is ever put in a message.
 */
import { escapeHtml } from '../../../platform/html.ts';
import type { OutgoingMail } from '../mail/index.ts';

/** One line of header text: line breaks and runs of spaces become one space (no header can be injected). */
function oneLine(text: string): string {
  return text.replace(/\s+/g, ' ').trim();
}

/** A simple HTML document of paragraphs (already-escaped HTML fragments). */
function html(paragraphs: string[]): string {
  return (
    '<!doctype html><html><body style="font-family: sans-serif; line-height: 1.5">' +
    paragraphs.map((p) => `<p>${p}</p>`).join('') +
    '</body></html>'
  );
}

/** The instant as an RFC 3339 UTC date-time without milliseconds (`2026-12-01T12:00:00Z`). */
function utc(instant: Date): string {
  return `${instant.toISOString().slice(0, 19)}Z`;
}

/** The receipt of an advertiser preview form (module comment: it says the details were received, nothing else). */
export function previewReceiptMail(to: string): OutgoingMail {
  const lines = [
    'Hello,',
    'We received the details submitted on the advertiser preview form for this email address.',
    'This message only confirms that we received them. It does not create an account and does not give access ' +
      'to the platform.',
    'You do not need to reply.',
  ];
  return {
    to,
    kind: 'preview_receipt',
    subject: 'We received your details',
    text: `${lines.join('\n\n')}\n`,
    html: html(lines.map(escapeHtml)),
  };
}

/** What an invitation mail says. */
export interface InvitationMailInput {
  to: string;
  kind: 'setup' | 'member';
  organizationName: string;
  role: 'admin' | 'member';
  /** The acceptance link, holding the single-use token. */
  link: string;
  expiresAt: Date;
  /** The inviting administrator's name (member invitations). */
  inviterName?: string;
  /** The title of the Commercial Offer attached to a setup invitation. */
  offerTitle?: string;
}

/** A setup or member invitation (module comment). */
export function invitationMail(input: InvitationMailInput): OutgoingMail {
  const org = oneLine(input.organizationName);
  const roleText = input.role === 'admin' ? 'an administrator' : 'a member';
  const intro =
    input.kind === 'setup'
      ? `You are invited to set up ${org} on the media-buying platform as its administrator.`
      : `${oneLine(input.inviterName ?? 'An administrator')} invited you to join ${org} on the media-buying ` +
        `platform as ${roleText}.`;
  const how =
    'Open the link below to create your account (or sign in with this email address) and join. The link works ' +
    `once and expires at ${utc(input.expiresAt)}.`;
  const offer =
    input.offerTitle === undefined
      ? undefined
      : `A Commercial Offer ("${oneLine(input.offerTitle)}") is attached. Joining does not accept it: once you ` +
        'have joined, review it and accept or decline it in the account settings.';
  const ignore = 'If you did not expect this invitation, ignore this message.';
  const text = [intro, how, input.link, ...(offer ? [offer] : []), ignore];
  const link = escapeHtml(input.link);
  return {
    to: input.to,
    kind: input.kind === 'setup' ? 'setup_invitation' : 'member_invitation',
    subject: input.kind === 'setup' ? `Set up ${org} on Media Buying` : `You are invited to join ${org}`,
    text: `${text.join('\n\n')}\n`,
    html: html([
      escapeHtml(intro),
      escapeHtml(how),
      `<a href="${link}">${link}</a>`,
      ...(offer ? [escapeHtml(offer)] : []),
      escapeHtml(ignore),
    ]),
  };
}
