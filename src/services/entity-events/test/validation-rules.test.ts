import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, test } from 'node:test';
import {
  BUSINESS_EVENT_TYPES,
  checkEventData,
  dataSchemaOf,
  PROSPECT_EVENT_TYPES,
  sampleData,
} from '../catalogue.ts';
import { checkEventTypes, checkIds, MAX_LISTED_ITEM_ISSUES } from '../enrollments.ts';
import { type Issue, invalidRequest } from '../entity-events-errors.ts';
import { checkCustomHeaders, parseCustomHeaders } from '../webhooks.ts';

/** Pure validation rules (no database): the `data` schemas, and collecting every issue of a request at once. */
describe('entity-events: validation rules', () => {
  const everyType = [...BUSINESS_EVENT_TYPES, ...PROSPECT_EVENT_TYPES];

  test('the sampleData of every catalogue type passes its data schema, which types every field it produces', () => {
    // sampleData feeds the simulator (through ingest) and check_connectivity's mock events; it is random, so each
    // type is drawn many times and on several dates (leap day and year ends included).
    const times = ['2026-06-01T12:00:00Z', '2028-02-29T23:59:59Z', '2025-12-31T00:00:00Z'].map(
      (t) => new Date(t),
    );
    for (const name of everyType) {
      const schema = dataSchemaOf(name);
      for (const t of times)
        for (let n = 0; n < 40; n++) {
          const data = sampleData(name, t);
          assert.deepEqual(checkEventData(name, data), [], `${name}: ${JSON.stringify(data)}`);
          for (const f of Object.keys(data))
            assert.ok(f in schema.properties, `${name}: the schema types ${f}`);
        }
    }
  });

  test('the funding round: amount a non-negative integer of whole USD, investors strings, funding_date YYYY-MM-DD', () => {
    const good = {
      funding_stage: 'series_a',
      funding_date: '2026-05-01',
      amount: 5_000_000,
      investors: ['Accel'],
      currency: 'USD',
    };
    assert.deepEqual(checkEventData('new_funding_round', good), []);
    assert.deepEqual(checkEventData('new_funding_round', { ...good, investors: [] }), [], 'undisclosed');
    const paths = (data: Record<string, unknown>) =>
      checkEventData('new_funding_round', data).map((i) => i.path);
    assert.deepEqual(
      paths({
        funding_stage: 5,
        funding_date: '2026/05/01',
        amount: '5M',
        investors: 'Accel',
        currency: 'EUR',
      }),
      ['funding_stage', 'funding_date', 'amount', 'investors', 'currency'],
    );
    for (const amount of [-1, 1.5, Number.NaN, 2 ** 60, '100', null])
      assert.deepEqual(paths({ ...good, amount }), ['amount'], String(amount));
    assert.match(
      checkEventData('new_funding_round', { ...good, amount: -1 })[0]!.message,
      /whole US dollars/,
    );
    assert.deepEqual(paths({ ...good, investors: ['Accel', 7, '', 'a16z', null] }), [
      'investors/1',
      'investors/2',
      'investors/4',
    ]);
    for (const funding_date of ['2026-02-30', '2026-02-29', '2026-5-1', '2026-05-01T00:00:00Z', 20260501])
      assert.deepEqual(paths({ ...good, funding_date }), ['funding_date'], String(funding_date));
    assert.deepEqual(paths({ ...good, funding_date: '2028-02-29' }), [], 'a leap day');
    for (const funding_stage of ['', '   ', 'x'.repeat(2001)])
      assert.deepEqual(
        checkEventData('new_funding_round', { ...good, funding_stage }),
        [{ path: 'funding_stage', message: 'must be a non-empty string of at most 2,000 characters' }],
        'one issue per field, however many checks it fails',
      );
    assert.deepEqual(paths({}), ['funding_stage', 'funding_date', 'amount', 'investors']);
    assert.equal(checkEventData('new_funding_round', {})[0]!.message, 'is required');
    assert.deepEqual(
      paths({ ...good, extra_field: { any: 'thing' } }),
      [],
      'fields outside the table are kept',
    );
  });

  test('counts are integers, departments match the event name, strings are strings, nested objects are checked', () => {
    const cases: [string, Record<string, unknown>, string[]][] = [
      [
        'increase_in_engineering_department',
        { department: 'sales', headcount_before: 10.5, headcount_after: -1, change_percentage: '5%' },
        ['department', 'headcount_before', 'headcount_after', 'change_percentage'],
      ],
      ['hiring_in_legal_department', { department: 'legal', open_positions: '3' }, ['open_positions']],
      ['prospect_changed_role', { previous_title: '', new_title: 42 }, ['previous_title', 'new_title']],
      ['prospect_job_start_anniversary', { company_name: 'Acme', years: 0 }, ['years']],
      ['ipo_announcement', { exchange: 'NYSE', ticker: 'ACME', ipo_date: 'soon' }, ['ipo_date']],
      [
        'new_office',
        { location: { city: 7, country_code: 'germany' } },
        ['location/city', 'location/country_code'],
      ],
      ['closing_office', { location: 'Berlin' }, ['location']],
      ['cost_cutting', { layoffs: 1.5 }, ['layoffs']],
      ['merger_and_acquisitions', { role: 'buyer' }, ['role']],
      ['new_product', { product_name: null }, ['product_name']],
    ];
    for (const [name, data, expected] of cases)
      assert.deepEqual(
        checkEventData(name, data).map((i) => i.path),
        expected,
        name,
      );
    assert.deepEqual(checkEventData('new_product', {}), [], 'a type without required fields accepts {}');
  });

  test('the README lists exactly the catalogue event types', () => {
    const readme = readFileSync(path.join(import.meta.dirname, '..', 'README.md'), 'utf8');
    const section = readme.slice(readme.indexOf('## Event types'), readme.indexOf('## Error body'));
    const listed = (label: string) => {
      const line = section.split('\n').find((l) => l.startsWith(`- ${label} (`)) ?? '';
      return [...line.matchAll(/`([a-z_]+)`/g)].map((m) => m[1]);
    };
    assert.deepEqual(listed('Business'), [...BUSINESS_EVENT_TYPES]);
    assert.deepEqual(listed('Prospect'), [...PROSPECT_EVENT_TYPES]);
  });

  test('headers: every bad entry is reported, each with its pointer', () => {
    const issues: Issue[] = [];
    const parsed = checkCustomHeaders(
      ['X-Ok: 1', 'NoColon', 'Bad Name: x', 'X-Signature: forged', 'x-ok: 2', `X-Long: ${'v'.repeat(1025)}`],
      issues,
    );
    assert.deepEqual(
      issues.map((i) => i.field),
      ['headers/1', 'headers/2', 'headers/3', 'headers/4', 'headers/5'],
    );
    assert.deepEqual(parsed, { 'X-Ok': '1' });
    const tooMany: Issue[] = [];
    checkCustomHeaders(
      Array.from({ length: 21 }, (_, i) => (i === 3 ? 'broken' : `X-H${i}: v`)),
      tooMany,
    );
    assert.deepEqual(
      tooMany.map((i) => i.field),
      ['headers', 'headers/3'],
    );
    assert.throws(
      () => parseCustomHeaders(['NoColon', 'Bad Name: x']),
      (err: { status: number; code: string; details: { issues: Issue[] } }) =>
        err.status === 400 && err.code === 'validation_failed' && err.details.issues.length === 2,
    );
  });

  test('ids and event types: every bad id and every unknown type is reported; the code names a single kind', () => {
    const issues: Issue[] = [];
    const ids = checkIds('business_ids', ['ok', 'bad id', 'ok', 7, 'x'.repeat(129)], issues);
    assert.deepEqual(ids, ['ok'], 'duplicates folded');
    assert.deepEqual(
      issues.map((i) => i.field),
      ['business_ids/1', 'business_ids/3', 'business_ids/4'],
    );
    const types = checkEventTypes('business', ['new_product', 'prospect_changed_role', 'nope'], issues);
    assert.deepEqual(types, ['new_product']);
    assert.deepEqual(
      issues.slice(3).map((i) => [i.field, i.code]),
      [
        ['event_types/1', 'unknown_event_type'],
        ['event_types/2', 'unknown_event_type'],
      ],
    );
    assert.equal(invalidRequest(issues).code, 'validation_failed', 'two kinds of problem');
    assert.equal(invalidRequest(issues.slice(3)).code, 'unknown_event_type', 'only unknown types');
    const many: Issue[] = [];
    checkIds(
      'business_ids',
      Array.from({ length: 41 }, (_, i) => `i${i}`),
      many,
      { max: 40 },
    );
    assert.equal(invalidRequest(many).code, 'too_many_ids');
  });

  test('a list full of bad items gets the first 20 listed and one issue counting the rest (a small answer)', () => {
    const issues: Issue[] = [];
    checkIds('business_ids', Array(5000).fill(''), issues, { max: 10_000 });
    assert.equal(MAX_LISTED_ITEM_ISSUES, 20);
    assert.equal(issues.length, 21);
    assert.deepEqual(
      issues.slice(0, 20).map((i) => i.field),
      Array.from({ length: 20 }, (_, i) => `business_ids/${i}`),
    );
    assert.deepEqual(issues[20], {
      location: 'body',
      field: 'business_ids',
      message: 'has 4980 more such items (the first 20 are listed)',
    });
    assert.ok(JSON.stringify(invalidRequest(issues).details).length < 5000);

    const types: Issue[] = [];
    checkEventTypes('business', Array(30).fill('nope'), types);
    assert.equal(types.length, 21);
    assert.deepEqual([types[20]!.field, types[20]!.code], ['event_types', 'unknown_event_type']);
    assert.equal(invalidRequest(types).code, 'unknown_event_type', 'the counting issue keeps the code');
  });

  test('the default message names the issues in the platform wording', () => {
    const err = invalidRequest([
      { location: 'body', field: 'name', message: 'is required' },
      { location: 'body', field: 'headers/0', message: 'must be "Name: value"' },
    ]);
    assert.equal(
      err.message,
      'Invalid request: body.name is required; body.headers.0 must be "Name: value".',
    );
    assert.equal(invalidRequest([], 'Custom.').message, 'Custom.');
  });
});
