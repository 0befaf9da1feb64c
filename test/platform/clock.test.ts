import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { ManualClock, systemClock } from '../../src/platform/clock.ts';

describe('platform: clock', () => {
  test('ManualClock starts at the given instant (number or Date) and stands still', () => {
    const a = new ManualClock(1_000);
    assert.equal(a.nowMs(), 1_000);
    assert.equal(a.now().getTime(), 1_000);
    const b = new ManualClock(new Date('2026-01-01T00:00:00Z'));
    assert.equal(b.now().toISOString(), '2026-01-01T00:00:00.000Z');
    assert.equal(b.nowMs(), Date.UTC(2026, 0, 1));
    assert.equal(b.nowMs(), Date.UTC(2026, 0, 1), 'does not move on its own');
  });

  test('advance moves forward and back; set jumps to an instant', () => {
    const c = new ManualClock(0);
    c.advance(1500);
    assert.equal(c.nowMs(), 1500);
    c.advance(-500);
    assert.equal(c.nowMs(), 1000);
    c.set(new Date(42));
    assert.equal(c.nowMs(), 42);
    c.set(7);
    assert.equal(c.now().getTime(), 7);
  });

  test('now() returns a fresh Date: mutating it does not move the clock', () => {
    const c = new ManualClock(100);
    c.now().setTime(999);
    assert.equal(c.nowMs(), 100);
  });

  test('ManualClock without argument starts at the real time', () => {
    const before = Date.now();
    const c = new ManualClock();
    assert.ok(c.nowMs() >= before && c.nowMs() <= Date.now());
  });

  test('systemClock follows wall time', () => {
    const before = Date.now();
    const ms = systemClock.nowMs();
    const d = systemClock.now().getTime();
    const after = Date.now();
    assert.ok(ms >= before && ms <= after);
    assert.ok(d >= before && d <= after);
  });
});
