/**
 * SMS segments (spec "Limits": long or non-Latin texts count as several segments against the daily budget; a reply is
 * "160 GSM-7 characters, one segment", which NOTES reads as GSM-7 encoding and exactly one segment, extension
 * characters counting twice), computed with `sms-segments-calculator` (Twilio's segment calculator: GSM 03.38 with
 * its extension table, UCS-2 otherwise, concatenation headers included).
 */
import { SegmentedMessage } from 'sms-segments-calculator';

/** The encoding and segment count of a text. */
export interface SegmentCount {
  encoding: 'GSM-7' | 'UCS-2';
  segments: number;
}

/** Counts the segments of `text` as an SMS (GSM-7 when every character has a GSM-7 code, else UCS-2). */
export function countSegments(text: string): SegmentCount {
  const message = new SegmentedMessage(text);
  return { encoding: message.encodingName, segments: message.segmentsCount };
}

/** True when `text` is GSM-7 and fits one segment (160 septets, extension characters counting two). */
export function isOneGsm7Segment(text: string): boolean {
  const { encoding, segments } = countSegments(text);
  return encoding === 'GSM-7' && segments === 1;
}
