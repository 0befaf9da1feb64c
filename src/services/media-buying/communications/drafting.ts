/**
 * The storefront agent that drafts a reply to an inbound brief (spec "Events", rules 2, 3 and 6).
 *
 * The service builds each reply from a {@link ReplyTemplate}: it writes the fixed parts (the storefront's shortened
 * name before the slot, the opt-out ending after it) and gives the agent the slot's length budget; the agent writes
 * only the slot. A {@link DraftingAgent} gets the words of ONE message, the storefront's public name and that budget,
 * and answers text: it has no tools, no database handle and no account data, so it cannot place or change a buy or a
 * setting, and cannot return account data it never sees (rule 3). Whatever it answers (the deterministic agent or a
 * model) is checked after generation ({@link ReplyTemplate.fill}: the slot's own limits, then {@link refuseDraft} on
 * the whole reply) before anything is queued; a refused draft is no reply. The sender's words and number are data to
 * it, never instructions that grant anything (rule 6).
 */
import { OPT_OUT_KEYWORDS } from './keywords.ts';
import { gsm7Length, isOneGsm7Segment } from './segments.ts';

/** What the agent is given: one message, whose storefront answers, and how long its part of the reply may be. */
export interface Brief {
  /** The inbound words (untrusted). */
  text: string;
  /** The storefront's name as the reply shows it ({@link shortenName}; public). */
  storefrontName: string;
  /**
   * The most GSM-7 characters the agent's part may take (extension characters such as `€` or `{` count two): what one
   * segment leaves after the fixed parts of {@link ReplyTemplate}.
   */
  budget: number;
}

/**
 * Drafts the slot of one reply from one brief: the words between the name and the opt-out ending, which the service
 * writes ({@link ReplyTemplate}). May throw (a model that fails): then no reply.
 */
export interface DraftingAgent {
  draft(brief: Brief): Promise<string>;
}

/** The opt-out keyword every reply ends with. */
export const REPLY_OPT_OUT = OPT_OUT_KEYWORDS[0];

/** The longest storefront name a reply carries; longer names are shortened to this with a final `.`. */
export const REPLY_NAME_MAX = 24;

/**
 * A storefront name fit for a reply: characters outside a plain GSM-7 set dropped, spaces collapsed, at most
 * {@link REPLY_NAME_MAX} characters (a longer one cut at a word boundary when it can and ended with `.`). The result
 * never makes {@link refuseDraft} refuse a reply (review SHOULD 8: `Ads.io Network` reads as a link, `Key-Partners`
 * as a credential): such a name is written again with letters and spaces only, and when even that is refused (a name
 * claiming an action) the reply says `Our team`.
 */
export function shortenName(name: string): string {
  const fitted = fitName(name);
  if (nameFitsReply(fitted)) return fitted;
  const letters = fitName(name.replace(/[^A-Za-z ]/g, ' '));
  return nameFitsReply(letters) ? letters : 'Our team';
}

function fitName(name: string): string {
  const plain = name
    .replace(/[^A-Za-z0-9 &'.,-]/g, ' ')
    .replace(/\s+/g, ' ')
    .trim();
  if (plain === '') return 'Our team';
  if (plain.length <= REPLY_NAME_MAX) return plain;
  const cut = plain.slice(0, REPLY_NAME_MAX - 1);
  const space = cut.lastIndexOf(' ');
  return `${(space >= 8 ? cut.slice(0, space) : cut).replace(/[\s.,&'-]+$/, '')}.`;
}

/** Whether a reply carrying `name` passes {@link refuseDraft} on the name's account. */
function nameFitsReply(name: string): boolean {
  return refuseDraft(`${name}: thanks.${OPT_OUT_ENDING}`) === null;
}

/** The fixed end of every reply (rule 3: always ends with the opt-out keyword). */
const OPT_OUT_ENDING = ` Opt out: ${REPLY_OPT_OUT}`;

/** The GSM-7 characters of one SMS segment (GSM 03.38). */
const SEGMENT_SEPTETS = 160;

/**
 * A reply as the service builds it (rule 3): `<shortened storefront name>: <slot> Opt out: STOP`, in one GSM-7
 * segment. The service writes the name and the ending; the slot is the drafting agent's, at most {@link budget}
 * GSM-7 characters.
 */
export class ReplyTemplate {
  /** The storefront's name as the reply shows it ({@link shortenName}). */
  readonly name: string;
  /** The most GSM-7 characters the slot may take (extension characters count two). */
  readonly budget: number;
  private readonly prefix: string;

  /** @param storefrontName the storefront's display name as stored (shortened here). */
  constructor(storefrontName: string) {
    this.name = shortenName(storefrontName);
    this.prefix = `${this.name}: `;
    // The name is plain GSM-7 ({@link shortenName} keeps letters, digits, spaces and `&'.,-`).
    this.budget = SEGMENT_SEPTETS - this.prefix.length - OPT_OUT_ENDING.length;
  }

  /**
   * The whole reply with `slot` (an agent's answer, untrusted) in its place, checked after generation: white space
   * runs (line breaks too) become one space and the ends are trimmed; an empty slot, one that is not GSM-7 or longer
   * than {@link budget}, or a whole reply that {@link refuseDraft} refuses, is refused.
   * @returns the reply, or why it is refused.
   */
  fill(slot: string): { reply: string } | { refusal: DraftRefusal } {
    const words = slot.replace(/\s+/g, ' ').trim();
    if (words === '') return { refusal: 'empty' };
    const length = gsm7Length(words);
    if (length === null || length > this.budget) return { refusal: 'not_one_gsm7_segment' };
    const reply = `${this.prefix}${words}${OPT_OUT_ENDING}`;
    const refusal = refuseDraft(reply);
    return refusal === null ? { reply } : { refusal };
  }
}

/** The words of the answer to HELP and INFO. */
const HELP_WORDS = 'media proposals by text. Msg&data rates may apply.';

/**
 * The fixed answer to HELP and INFO: the reply template with fixed words, one GSM-7 segment ending with the opt-out
 * keyword. A name that the checks would refuse with these words (none is known: {@link shortenName} already rewrites
 * names that would be refused) gives the answer of `Our team`.
 */
export function helpReply(storefrontName: string): string {
  const filled = new ReplyTemplate(storefrontName).fill(HELP_WORDS);
  return 'reply' in filled ? filled.reply : `Our team: ${HELP_WORDS}${OPT_OUT_ENDING}`;
}

/** Channel words the deterministic agent recognizes in a brief. */
const CHANNELS = [
  'video',
  'ctv',
  'display',
  'audio',
  'podcast',
  'social',
  'search',
  'native',
  'ooh',
] as const;

/**
 * The deterministic drafting agent (the default): recognizes channel words and a dollar budget in the brief, and
 * answers a fixed draft acknowledgement naming them (without them when they would not fit the budget). It echoes no
 * other words of the sender.
 */
export class DeterministicDraftingAgent implements DraftingAgent {
  async draft(brief: Brief): Promise<string> {
    const words = brief.text.toLowerCase();
    const channels = CHANNELS.filter((c) => new RegExp(`\\b${c}\\b`).test(words)).slice(0, 3);
    const budgetMatch = /\$\s?(\d{1,9}(?:,\d{3}){0,3})(k|m)?\b/i.exec(brief.text);
    const budget = budgetMatch ? roundedDollars(budgetMatch[1]!, budgetMatch[2]) : undefined;
    const topics = [...channels.map((c) => (c === 'ctv' || c === 'ooh' ? c.toUpperCase() : c))];
    if (budget) topics.push(budget);
    const about = topics.length > 0 ? ` (${topics.join(', ')})` : '';
    const slot = (named: string) =>
      `thanks for your brief${named}. Draft only: a proposal follows, nothing is booked.`;
    return slot(about).length <= brief.budget ? slot(about) : slot('');
  }
}

/**
 * A dollar amount as a reply shows it: rounded, `$900`, `$25k`, `$1.5M` (never a long run of digits, which a reply
 * may not carry).
 */
function roundedDollars(digits: string, suffix: string | undefined): string {
  const scale = suffix?.toLowerCase() === 'm' ? 1e6 : suffix?.toLowerCase() === 'k' ? 1e3 : 1;
  const amount = Number(digits.replace(/,/g, '')) * scale;
  if (amount >= 1e9) return `$${Math.round(amount / 1e8) / 10}B`;
  if (amount >= 1e6) return `$${Math.round(amount / 1e5) / 10}M`;
  if (amount >= 1e3) return `$${Math.round(amount / 1e2) / 10}k`;
  return `$${amount}`;
}

/** Why a draft is refused. */
export type DraftRefusal =
  | 'empty'
  | 'not_one_gsm7_segment'
  | 'no_opt_out_ending'
  | 'contains_link'
  | 'contains_contact_or_credential'
  | 'claims_an_action'
  | 'asks_for_payment_or_secret';

/** Credential and id shapes of this platform and common API keys. */
const CREDENTIAL =
  /\b(?:mbu|mbo|mba|mbr|mbt|lgc|wgt|key|org|usr|adv|sf|ln|txo|txi|sk|pk|rk)[_-][A-Za-z0-9_-]{6,}/i;
const LINK = /(?:https?:\/\/|www\.|\b[a-z0-9-]+\.(?:com|net|org|io|co|ly|me|app|link|xyz)\b)/i;
const EMAIL = /[^\s@]+@[^\s@]+\.[^\s@]+/;
/** Seven digits or more in a row (phone numbers, account numbers), separators allowed. */
const LONG_NUMBER = /(?:\d[\s().-]?){7,}/;
/** Words of a completed action on a buy, a campaign or the account. */
const ACTION =
  /\b(?:i|we|i've|we've|i have|we have|has been|have been|is now|are now)\s+(?:\w+\s+)?(?:booked|placed|purchased|bought|launched|activated|confirmed|changed|updated|cancel+ed|paused|increased|decreased|approved|transferred|charged|refunded)\b/i;

/** Claims of a result in other words: live, went through, all set, successful, confirmed. */
const CLAIM =
  /\b(?:is|are|now|went|go(?:es)?)\s+(?:now\s+|all\s+)?(?:live|through|set|running|active|confirmed)\b|\bsuccess(?:ful(?:ly)?)?\b|\blive now\b/i;
/** Asks the recipient to pay, confirm a purchase by reply, or hand over a secret. */
const ASK =
  /\b(?:pay|payment|paid|invoice|wire|deposit|card|password|passcode|pin|otp|ssn|bank|login|log in|sign in|verify)\b|\b(?:reply|text|respond|answer)\s+(?:with\s+)?(?:yes|y|ok|confirm|1|agree)\b/i;

/**
 * Checks a draft against rule 3 after generation (whatever generated it).
 * @returns null when the draft may be queued, else why not.
 */
export function refuseDraft(draft: string): DraftRefusal | null {
  if (!isOneGsm7Segment(draft)) return 'not_one_gsm7_segment';
  if (!new RegExp(`(?:^|[^A-Za-z])${REPLY_OPT_OUT}$`).test(draft)) return 'no_opt_out_ending';
  if (LINK.test(draft)) return 'contains_link';
  if (CREDENTIAL.test(draft) || EMAIL.test(draft) || LONG_NUMBER.test(draft))
    return 'contains_contact_or_credential';
  if (ACTION.test(draft) || CLAIM.test(draft)) return 'claims_an_action';
  if (ASK.test(draft)) return 'asks_for_payment_or_secret';
  return null;
}
