/**
 * The injectable clock. Every rule that depends on time (windows, expiries, snapshot refreshes, retention)
 * reads `Clock.now()` instead of `Date.now()`, so tests move time with a {@link ManualClock} instead of sleeping.
 */
export interface Clock {
  /** The current instant. */
  now(): Date;
  /** The current instant in milliseconds since the Unix epoch. */
  nowMs(): number;
}

/** The real clock (wall time). */
export const systemClock: Clock = {
  now: () => new Date(),
  nowMs: () => Date.now(),
};

/**
 * A clock that only moves when told to. Starts at `start` (default: the real time at construction).
 * Used by tests to cross time boundaries deterministically.
 */
export class ManualClock implements Clock {
  private currentMs: number;

  constructor(start: Date | number = Date.now()) {
    this.currentMs = typeof start === 'number' ? start : start.getTime();
  }

  now(): Date {
    return new Date(this.currentMs);
  }

  nowMs(): number {
    return this.currentMs;
  }

  /** Moves the clock forward by `ms` milliseconds (negative values move it back). */
  advance(ms: number): void {
    this.currentMs += ms;
  }

  /** Sets the clock to an absolute instant. */
  set(instant: Date | number): void {
    this.currentMs = typeof instant === 'number' ? instant : instant.getTime();
  }
}
