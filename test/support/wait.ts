/**
 * The one way tests wait for something asynchronous: poll a probe until it answers, bounded in time. Never a fixed
 * sleep followed by a negative check ("nothing happened"): wait for a positive sign that what could have happened
 * would have by now (a later message on the same socket, a lock another session is seen waiting on, ...).
 */

/**
 * Polls `probe` every `intervalMs` (default 20) until it returns a value other than `undefined` or `false`, and
 * returns that value; fails after `timeoutMs` (default 10,000) with `timed out waiting for <what>`.
 * @param probe sync or async; for a condition return a boolean (`waitUntil('three rows', () => seen.length === 3)`).
 */
export async function waitUntil<T>(
  what: string,
  probe: () => T | undefined | false | Promise<T | undefined | false>,
  options: { timeoutMs?: number; intervalMs?: number } = {},
): Promise<T> {
  const timeoutMs = options.timeoutMs ?? 10_000;
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what} (${timeoutMs} ms)`);
    await new Promise((r) => setTimeout(r, options.intervalMs ?? 20));
  }
}
