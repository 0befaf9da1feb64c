import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { type ApiError, ConfigError } from '../../../platform/errors.ts';
import { divideRoundHalfUp, lineTax, MAX_AMOUNT, percentToPpm, priceLineItems } from '../money.ts';
import { DEFAULT_TAX_RATES, parseTaxRates, readPaymentsConfig } from '../payments-config.ts';

const rates = parseTaxRates(DEFAULT_TAX_RATES);

describe('money: tax per line, rounded half up, exact cents', () => {
  test('divideRoundHalfUp rounds halves up and everything else to nearest', () => {
    assert.equal(divideRoundHalfUp(5n, 10n), 1n); // 0.5 -> 1
    assert.equal(divideRoundHalfUp(4n, 10n), 0n); // 0.4 -> 0
    assert.equal(divideRoundHalfUp(15n, 10n), 2n); // 1.5 -> 2
    assert.equal(divideRoundHalfUp(149n, 100n), 1n); // 1.49 -> 1
    assert.equal(divideRoundHalfUp(0n, 7n), 0n);
  });

  test('exclusive tax is round(net × rate)', () => {
    assert.equal(lineTax(2500, 88_750, 'exclusive'), 222); // 221.875
    assert.equal(lineTax(1000, 88_750, 'exclusive'), 89); // 88.75
    assert.equal(lineTax(10, 50_000, 'exclusive'), 1); // 0.5 exactly: half up
    assert.equal(lineTax(29, 50_000, 'exclusive'), 1); // 1.45
    assert.equal(lineTax(30, 50_000, 'exclusive'), 2); // 1.5 exactly: half up
    assert.equal(lineTax(999, 0, 'exclusive'), 0);
  });

  test('inclusive tax is round(gross × rate / (1 + rate))', () => {
    assert.equal(lineTax(1000, 88_750, 'inclusive'), 82); // 81.5155...
    assert.equal(lineTax(1089, 88_750, 'inclusive'), 89); // 88.7715...
    assert.equal(lineTax(1, 1_000_000, 'inclusive'), 1); // 0.5 exactly at 100 %: half up
    assert.equal(lineTax(125, 250_000, 'inclusive'), 25); // exactly 25
    assert.equal(lineTax(999, 0, 'inclusive'), 0);
  });

  test('exclusive intent: lines add tax; amount and taxAmount are the sums; subtotal = total - tax', () => {
    const t = priceLineItems(
      [
        {
          referenceId: 'sku-1',
          description: 'Notebook',
          quantity: 2,
          unitAmount: 1250,
          taxCode: 'txcd_99999999',
        },
        { description: 'E-book', quantity: 3, unitAmount: 333, taxCode: 'txcd_10000000' },
        { description: 'Consulting', quantity: 1, unitAmount: 10_001, taxCode: 'txcd_20030000' },
        { description: 'Shipping', quantity: 1, unitAmount: 499, taxCode: null },
      ],
      'exclusive',
      rates,
    );
    // 2500 * 8.875 % = 221.875 -> 222; 999 * 6 % = 59.94 -> 60; 10001 * 4.5 % = 450.045 -> 450; untaxed 0.
    assert.deepEqual(
      t.lineItems.map((l) => [l.position, l.subtotalAmount, l.taxAmount, l.totalAmount]),
      [
        [0, 2500, 222, 2722],
        [1, 999, 60, 1059],
        [2, 10_001, 450, 10_451],
        [3, 499, 0, 499],
      ],
    );
    assert.equal(t.taxAmount, 732);
    assert.equal(t.amount, 2722 + 1059 + 10_451 + 499);
    assert.equal(t.lineItems[0]!.referenceId, 'sku-1');
    assert.equal(t.lineItems[1]!.referenceId, null);
    for (const l of t.lineItems) assert.match(l.id, /^pli_[0-9a-f]{32}$/);
    assert.equal(new Set(t.lineItems.map((l) => l.id)).size, 4);
  });

  test('inclusive intent: tax is taken out of the line total; amount = sum of line totals', () => {
    const t = priceLineItems(
      [
        { description: 'Notebook', quantity: 2, unitAmount: 1250, taxCode: 'txcd_99999999' },
        { description: 'E-book', quantity: 1, unitAmount: 1000, taxCode: 'txcd_10000000' },
      ],
      'inclusive',
      rates,
    );
    // 2500 * 0.08875 / 1.08875 = 203.788... -> 204; 1000 * 0.06 / 1.06 = 56.603... -> 57.
    assert.deepEqual(
      t.lineItems.map((l) => [l.subtotalAmount, l.taxAmount, l.totalAmount]),
      [
        [2296, 204, 2500],
        [943, 57, 1000],
      ],
    );
    assert.equal(t.amount, 3500);
    assert.equal(t.taxAmount, 261);
  });

  test('unknown tax code, zero total and too large totals are 400 invalid_value with a pointer', () => {
    const unknown = () =>
      priceLineItems(
        [
          { description: 'a', quantity: 1, unitAmount: 1 },
          { description: 'b', quantity: 1, unitAmount: 1, taxCode: 'nope' },
        ],
        'exclusive',
        rates,
      );
    assert.throws(unknown, (e: ApiError) => {
      assert.equal(e.status, 400);
      assert.equal(e.code, 'invalid_value');
      assert.equal(e.details?.pointer, '/data/attributes/lineItems/1/taxCode');
      return true;
    });
    assert.throws(
      () => priceLineItems([{ description: 'free', quantity: 3, unitAmount: 0 }], 'exclusive', rates),
      (e: ApiError) => e.status === 400 && e.details?.pointer === '/data/attributes/lineItems',
    );
    assert.throws(
      () =>
        priceLineItems(
          [{ description: 'big', quantity: 1, unitAmount: MAX_AMOUNT, taxCode: 'txcd_99999999' }],
          'exclusive',
          rates,
        ),
      (e: ApiError) => e.status === 400 && e.code === 'invalid_value',
    );
  });

  test('invariants over many lines: subtotal + tax = total, sums without a second rounding, exact BigInt tax', () => {
    // A fixed pseudo-random sequence (no flakiness): quantities, unit amounts, codes and both modes.
    let seed = 12_345;
    const next = (n: number) => {
      seed = (seed * 48_271) % 2_147_483_647; // MINSTD: exact in doubles
      return seed % n;
    };
    const codes = [...rates.keys(), null];
    for (let round = 0; round < 300; round++) {
      const mode = round % 2 === 0 ? 'exclusive' : 'inclusive';
      const lines = Array.from({ length: 1 + next(5) }, (_, i) => ({
        description: `line ${i}`,
        quantity: 1 + next(20),
        unitAmount: next(50_000),
        taxCode: codes[next(codes.length)] ?? null,
      }));
      if (lines.every((l) => l.unitAmount === 0)) lines[0]!.unitAmount = 1;
      const t = priceLineItems(lines, mode, rates);
      let amount = 0;
      let tax = 0;
      t.lineItems.forEach((l, i) => {
        const line = lines[i]!;
        const gross = line.quantity * line.unitAmount;
        const ppm = BigInt(line.taxCode === null ? 0 : rates.get(line.taxCode)!);
        // Half up of gross × rate (exclusive) or gross × rate / (1 + rate) (inclusive), in exact integers.
        const num = BigInt(gross) * ppm * 2n;
        const den = (mode === 'exclusive' ? 1_000_000n : 1_000_000n + ppm) * 2n;
        const expectedTax = Number((num + den / 2n) / den);
        assert.equal(l.position, i);
        assert.equal(l.taxAmount, expectedTax, JSON.stringify({ line, mode }));
        assert.equal(l.subtotalAmount + l.taxAmount, l.totalAmount);
        assert.equal(mode === 'exclusive' ? l.subtotalAmount : l.totalAmount, gross);
        assert.ok(Number.isSafeInteger(l.totalAmount) && l.taxAmount >= 0 && l.subtotalAmount >= 0);
        amount += l.totalAmount;
        tax += l.taxAmount;
      });
      assert.equal(t.amount, amount);
      assert.equal(t.taxAmount, tax);
    }
  });

  test('rates are parsed as exact parts per million; bad tables fail at start', () => {
    assert.equal(percentToPpm('8.875'), 88_750);
    assert.equal(percentToPpm('0'), 0);
    assert.equal(percentToPpm('100'), 1_000_000);
    assert.equal(percentToPpm('100.0001'), undefined);
    assert.equal(percentToPpm('8.87501'), undefined);
    assert.equal(percentToPpm('-1'), undefined);
    assert.deepEqual(
      [...parseTaxRates('a=1.5,b=0').entries()],
      [
        ['a', 15_000],
        ['b', 0],
      ],
    );
    assert.throws(() => parseTaxRates('a=abc'), ConfigError);
    assert.throws(() => parseTaxRates('=5'), ConfigError);
    assert.throws(() => readPaymentsConfig({ PAYMENTS_MAX_ATTEMPTS: '0' }), /PAYMENTS_MAX_ATTEMPTS/);
    assert.throws(
      () =>
        readPaymentsConfig({ PAYMENTS_DEFAULT_EXPIRY_SECONDS: '7200', PAYMENTS_MAX_EXPIRY_SECONDS: '3600' }),
      /PAYMENTS_DEFAULT_EXPIRY_SECONDS/,
    );
    assert.equal(readPaymentsConfig({}).taxRates.get('txcd_99999999'), 88_750);
    assert.equal(readPaymentsConfig({ PAYMENTS_TAX_RATES: 'x=7' }).taxRates.get('txcd_99999999'), undefined);
  });
});
