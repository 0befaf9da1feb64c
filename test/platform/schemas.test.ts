import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { Type } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';
import { isCalendarDate, isRfc3339DateTime, parseRfc3339DateTime } from '../../src/platform/schemas.ts';

describe('platform: RFC 3339 dates and date-times (and TypeBox formats date, date-time)', () => {
  test('a calendar date must exist as written', () => {
    for (const ok of ['2026-02-28', '2028-02-29', '2026-12-31']) assert.ok(isCalendarDate(ok), ok);
    for (const bad of [
      '2026-02-29',
      '2026-02-30',
      '2026-13-01',
      '2026-1-01',
      '20260101',
      '2026-01-01T00:00:00Z',
    ])
      assert.ok(!isCalendarDate(bad), bad);
  });

  test('a date-time needs its offset and an existing date; T, t or a space separates; up to 9 fraction digits', () => {
    for (const ok of [
      '2026-04-01T08:00:00Z',
      '2026-04-01t08:00:00z',
      '2026-04-01 08:00:00+02:00',
      '2026-04-01T08:00:00.123456789-05:30',
    ])
      assert.ok(isRfc3339DateTime(ok), ok);
    for (const bad of [
      '2026-04-01T08:00:00', // no offset: server-local time would be guessed
      '2026-02-30T08:00:00Z', // Date.parse rolls it into March
      '2026-04-01T08:00:00.1234567890Z',
      '2026-04-01T25:00:00Z',
      'yesterday',
    ])
      assert.ok(!isRfc3339DateTime(bad), bad);
    assert.equal(
      parseRfc3339DateTime('2026-04-01T10:00:00+02:00')?.toISOString(),
      '2026-04-01T08:00:00.000Z',
    );
    assert.equal(parseRfc3339DateTime('2026-04-01T10:00:00'), undefined);
  });

  test('TypeBox Value.Check uses the same meanings', () => {
    assert.ok(Value.Check(Type.String({ format: 'date' }), '2028-02-29'));
    assert.ok(!Value.Check(Type.String({ format: 'date' }), '2026-02-29'));
    assert.ok(Value.Check(Type.String({ format: 'date-time' }), '2026-04-01T08:00:00Z'));
    assert.ok(!Value.Check(Type.String({ format: 'date-time' }), '2026-02-30T08:00:00Z'));
  });
});
