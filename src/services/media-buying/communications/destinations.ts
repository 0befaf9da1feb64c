/**
 * Which destinations a line may text (spec "Limits", "Text destinations": ordinary +1 numbers only; no premium-rate
 * numbers such as area code 900, no short codes, no other countries; refused with 400), decided with
 * `libphonenumber-js/max` (the full metadata, which knows number types).
 *
 * Choices where the spec is silent (README, "Text lines"):
 * - Allowed: valid numbers of the United States and of its territories that share +1 (Puerto Rico, the US Virgin
 *   Islands, Guam, the Northern Mariana Islands, American Samoa), of type mobile, fixed line, either, or VoIP.
 * - Canada and the Caribbean +1 countries are other countries: refused (`other_country`).
 * - Toll-free numbers (800, 833, 844, 855, 866, 877, 888) are not ordinary: refused (`toll_free`); so are premium-rate
 *   (900), personal numbers (500, 533, ...), shared cost, pager, UAN and voicemail numbers (`not_ordinary`).
 * - A short code (5 or 6 digits) is not E.164; written after `+1` it is refused as `short_code`.
 */
import { parsePhoneNumberFromString } from 'libphonenumber-js/max';

/** Regions that are the United States for texting. */
const DOMESTIC_REGIONS = new Set(['US', 'PR', 'VI', 'GU', 'MP', 'AS']);

/** Number types of ordinary lines. */
const ORDINARY_TYPES = new Set(['MOBILE', 'FIXED_LINE', 'FIXED_LINE_OR_MOBILE', 'VOIP']);

/** Why a destination is refused. */
export type DestinationRefusal =
  | 'not_e164'
  | 'other_country'
  | 'short_code'
  | 'invalid_number'
  | 'premium_rate'
  | 'toll_free'
  | 'not_ordinary';

/** The outcome of {@link classifyDestination}: the normalized E.164 number, or why it is refused. */
export type DestinationClass =
  | { allowed: true; e164: string; region: string; type: string }
  | { allowed: false; reason: DestinationRefusal };

/** E.164: `+`, a country code not starting with 0, at most 15 digits in all (ITU-T E.164). */
export const E164_PATTERN = '^\\+[1-9][0-9]{1,14}$';
const E164 = new RegExp(E164_PATTERN);

/**
 * Classifies a destination (module comment).
 * @param destination as the caller wrote it (E.164 expected).
 */
export function classifyDestination(destination: string): DestinationClass {
  if (!E164.test(destination)) return { allowed: false, reason: 'not_e164' };
  if (!destination.startsWith('+1')) return { allowed: false, reason: 'other_country' };
  const national = destination.slice(2);
  if (national.length < 10) return { allowed: false, reason: 'short_code' };
  const parsed = parsePhoneNumberFromString(destination);
  if (!parsed?.isValid()) return { allowed: false, reason: 'invalid_number' };
  const region = parsed.country ?? '';
  if (!DOMESTIC_REGIONS.has(region)) return { allowed: false, reason: 'other_country' };
  const type = parsed.getType() ?? 'UNKNOWN';
  if (type === 'PREMIUM_RATE') return { allowed: false, reason: 'premium_rate' };
  if (type === 'TOLL_FREE') return { allowed: false, reason: 'toll_free' };
  if (!ORDINARY_TYPES.has(type)) return { allowed: false, reason: 'not_ordinary' };
  return { allowed: true, e164: parsed.number, region, type };
}

/**
 * The sender number of an inbound text as one E.164 key (review MUST 1: a STOP from `13125550147` must opt out the
 * same number a command texts as `+13125550147`). The carrier may omit the `+`: a number without it is read as a +1
 * number (national `3125550147` or `13125550147`, with `libphonenumber-js`); one with `+` is kept as written. A string
 * that is no possible number (a short code such as `12345`) is kept as `+` and its digits, so it still has one key.
 * @param from the carrier's `from` (digits, optionally after `+`).
 * @returns E.164 (`+13125550147`).
 */
export function normalizeSender(from: string): string {
  if (from.startsWith('+')) return from;
  const parsed = parsePhoneNumberFromString(from, 'US');
  return parsed?.isPossible() ? parsed.number : `+${from}`;
}
