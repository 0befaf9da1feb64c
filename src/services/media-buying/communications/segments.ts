/**
 * SMS segments (spec "Limits": long or non-Latin texts count as several segments against the daily budget; a reply is
 * "160 GSM-7 characters, one segment", which NOTES reads as GSM-7 encoding and exactly one segment, extension
 * characters counting twice), computed with `sms-segments-calculator` (Twilio's segment calculator: GSM 03.38 with
 * its extension table, UCS-2 otherwise, concatenation headers included).
 *
 * A text made only of characters of the GSM-7 basic table (as the library encodes them, no extension character) is
 * counted without the library's grapheme splitting: each such character is one septet on its own (the library splits
 * CR LF again), so the count is 1 segment up to 160 characters, else one per 153 (a 6-octet concatenation header
 * leaves 153 septets). Any other text goes to the library. A test checks both give the same answer on generated texts.
 */
import { SegmentedMessage } from 'sms-segments-calculator';

/** The encoding and segment count of a text. */
export interface SegmentCount {
  encoding: 'GSM-7' | 'UCS-2';
  segments: number;
}

/** Septets of a single GSM-7 segment, and of each segment of a concatenated message (GSM 03.40 / 03.38). */
const SINGLE_SEPTETS = 160;
const CONCATENATED_SEPTETS = 153;

/** Every character of the GSM-7 basic table is below U+0400 (the highest is Ω, U+03A9). */
const BASIC_RANGE = 0x400;

/**
 * UTF-16 code units below {@link BASIC_RANGE} that the library encodes as one GSM-7 septet, asked of the library once
 * at load (it splits CR LF into two characters again, so CR is one of them).
 */
const BASIC = new Uint8Array(BASIC_RANGE);
for (let code = 0; code < BASIC_RANGE; code++) {
  const one = new SegmentedMessage(String.fromCharCode(code));
  if (one.encodingName === 'GSM-7' && one.numberOfCharacters === 1) BASIC[code] = 1;
}

/** True when every character of `text` (not empty) is a GSM-7 basic-table character. */
function allBasic(text: string): boolean {
  const n = text.length;
  let basic = n > 0;
  for (let i = 0; basic && i < n; i++) {
    const code = text.charCodeAt(i);
    basic = code < BASIC_RANGE && BASIC[code] === 1;
  }
  return basic;
}

/** Counts the segments of `text` as an SMS (GSM-7 when every character has a GSM-7 code, else UCS-2). */
export function countSegments(text: string): SegmentCount {
  const n = text.length;
  if (allBasic(text))
    return {
      encoding: 'GSM-7',
      segments: n <= SINGLE_SEPTETS ? 1 : Math.ceil(n / CONCATENATED_SEPTETS),
    };
  const message = new SegmentedMessage(text);
  return { encoding: message.encodingName, segments: message.segmentsCount };
}

/** True when `text` is GSM-7 and fits one segment (160 septets, extension characters counting two). */
export function isOneGsm7Segment(text: string): boolean {
  const { encoding, segments } = countSegments(text);
  return encoding === 'GSM-7' && segments === 1;
}

/**
 * The GSM-7 length of `text` in septets (extension characters such as `€`, `{` or `^` count two), or null when it is
 * not GSM-7 (a character outside both tables).
 */
export function gsm7Length(text: string): number | null {
  if (allBasic(text)) return text.length;
  const message = new SegmentedMessage(text);
  return message.encodingName === 'GSM-7' ? message.numberOfCharacters : null;
}
