import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { Type } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';
import {
  EARLIEST_INSTANT_MS,
  isCalendarDate,
  isRfc3339DateTime,
  LATEST_INSTANT_MS,
  parseRfc3339DateTime,
} from '../../src/platform/schemas.ts';
import { bareServiceApp } from '../support/platform.ts';

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

describe('platform: one definition of date and date-time for the request validator, TypeBox and the domain', () => {
  test('years 0001-0099 are calendar years, not 1900-1999', () => {
    for (const ok of ['0001-01-01', '0048-02-29', '0099-12-31']) assert.ok(isCalendarDate(ok), ok);
    for (const bad of ['0050-02-29', '0100-02-29']) assert.ok(!isCalendarDate(bad), bad);
    assert.equal(parseRfc3339DateTime('0050-06-01T00:00:00Z')?.toISOString(), '0050-06-01T00:00:00.000Z');
  });

  test('dates PostgreSQL cannot store, or whose UTC form has no four-digit year, are refused', () => {
    // Year 0 does not exist in PostgreSQL; years past 9999 have no four-digit form.
    for (const bad of ['0000-01-01', '0000-12-31', '10000-01-01', '+010000-01-01'])
      assert.ok(!isCalendarDate(bad), bad);
    for (const bad of [
      '0000-01-01T00:00:00Z',
      '0001-01-01T00:30:00+01:00', // 0000-12-31T23:30Z
      '9999-12-31T23:30:00-01:00', // 10000-01-01T00:30Z
      '+010000-01-01T00:00:00Z',
    ])
      assert.equal(parseRfc3339DateTime(bad), undefined, bad);
    assert.equal(parseRfc3339DateTime('0001-01-01T00:00:00Z')?.getTime(), EARLIEST_INSTANT_MS);
    assert.equal(parseRfc3339DateTime('9999-12-31T23:59:59.999Z')?.getTime(), LATEST_INSTANT_MS);
    assert.ok(isCalendarDate('9999-12-31'));
  });

  test('the request validator (Ajv) accepts exactly what the platform helpers accept', async () => {
    const app = await bareServiceApp({
      name: 'formats-test',
      formatError: (error) => ({ body: { code: error.code } }),
      operatorToken: 'operator-token-for-format-tests',
    });
    app.post(
      '/check',
      {
        schema: {
          querystring: Type.Object({ day: Type.Optional(Type.String({ format: 'date' })) }),
          body: Type.Object({ at: Type.Optional(Type.String({ format: 'date-time' })) }),
        },
      },
      async () => ({ ok: true }),
    );
    await app.ready();
    try {
      const dateTimes = [
        '2026-04-01T08:00:00Z',
        '2026-04-01 08:00:00+02:00',
        '2026-04-01T08:00:00+0200', // offset without a colon: not RFC 3339
        '2026-12-31T23:59:60Z', // a leap second: no JavaScript Date can hold it
        '2026-02-29T08:00:00Z',
        '0050-01-01T00:00:00Z',
        '2026-04-01T08:00:00',
      ];
      for (const at of dateTimes) {
        const res = await app.inject({ method: 'POST', url: '/check', payload: { at } });
        assert.equal(res.statusCode === 200, isRfc3339DateTime(at), `${at}: ${res.statusCode}`);
        assert.equal(Value.Check(Type.String({ format: 'date-time' }), at), isRfc3339DateTime(at), at);
      }
      for (const day of ['2026-02-28', '2026-02-29', '0050-01-01', '0050-02-29', '2026-1-01']) {
        const res = await app.inject({ method: 'POST', url: `/check?day=${day}`, payload: {} });
        assert.equal(res.statusCode === 200, isCalendarDate(day), `${day}: ${res.statusCode}`);
      }
    } finally {
      await app.close();
    }
  });
});
