/**
 * The keywords of inbound texts (spec "Events", rule 1), matched as NOTES says: the whole message is one word,
 * trimmed, trailing punctuation dropped, compared case-insensitively. `STOP`, `UNSUBSCRIBE`, `CANCEL`, `END`, `QUIT` opt the number out of the line;
 * `START`, `UNSTOP` opt it in; `HELP`, `INFO` are control messages. Anything else is a brief for the agent.
 */

/** The opt-out keywords (the first is the one every reply ends with). */
export const OPT_OUT_KEYWORDS = ['STOP', 'UNSUBSCRIBE', 'CANCEL', 'END', 'QUIT'] as const;
/** The opt-in keywords. */
export const OPT_IN_KEYWORDS = ['START', 'UNSTOP'] as const;
/** The control keywords. */
export const HELP_KEYWORDS = ['HELP', 'INFO'] as const;

/** What a text is by rule 1. */
export type KeywordKind = 'opt_out' | 'opt_in' | 'help';

const KINDS = new Map<string, KeywordKind>([
  ...OPT_OUT_KEYWORDS.map((k) => [k, 'opt_out'] as const),
  ...OPT_IN_KEYWORDS.map((k) => [k, 'opt_in'] as const),
  ...HELP_KEYWORDS.map((k) => [k, 'help'] as const),
]);

/** Punctuation a one-word message may end with (`STOP.`, `Stop!`, `HELP?`): still that one word. */
const TRAILING_PUNCTUATION = /[.!?,;:]+$/;

/**
 * The keyword `text` is, or null for a brief (a text of several words that contains a keyword is a brief). Trailing
 * punctuation is not part of the word: `STOP.` and `Stop!` opt out (review SHOULD 11: they must not get a reply).
 */
export function keywordOf(text: string): KeywordKind | null {
  // `toUpperCase` is locale-independent (the default Unicode case mapping).
  return KINDS.get(text.trim().replace(TRAILING_PUNCTUATION, '').trimEnd().toUpperCase()) ?? null;
}
