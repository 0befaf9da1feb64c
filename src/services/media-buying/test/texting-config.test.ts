/** The settings of text-message lines (`MEDIA_BUYING_TEXT_*`, `MEDIA_BUYING_CARRIER_*`, `MEDIA_BUYING_DRAFTING_*`). */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { ConfigError } from '../../../platform/errors.ts';
import { readTextingConfig } from '../communications/index.ts';

describe('texting configuration', () => {
  test('defaults: 10 per minute, 500 segments a day, a derived webhook secret, the deterministic agent', () => {
    const config = readTextingConfig({});
    assert.deepEqual(
      [
        config.perMinute,
        config.dailySegments,
        config.webhookSecret,
        config.draftingModel,
        config.simulatorLatencyMs,
      ],
      [10, 500, undefined, undefined, 0],
    );
  });

  test('invalid values stop the start with a one-line reason', () => {
    const bad: Record<string, string>[] = [
      { MEDIA_BUYING_TEXT_DAILY_SEGMENTS: '0' },
      { MEDIA_BUYING_TEXT_PER_MINUTE: 'ten' },
      { MEDIA_BUYING_CARRIER_WEBHOOK_SECRET: 'short' },
      { MEDIA_BUYING_CARRIER_SIMULATOR_LATENCY_MS: '99999' },
      { MEDIA_BUYING_DRAFTING_MODEL_URL: 'https://models.example/v1' },
      {
        MEDIA_BUYING_DRAFTING_MODEL_URL: 'ftp://x',
        MEDIA_BUYING_DRAFTING_MODEL: 'm',
        MEDIA_BUYING_DRAFTING_MODEL_KEY: 'k',
      },
    ];
    for (const env of bad) assert.throws(() => readTextingConfig(env), ConfigError, JSON.stringify(env));
    const model = readTextingConfig({
      MEDIA_BUYING_DRAFTING_MODEL_URL: 'https://models.example/v1',
      MEDIA_BUYING_DRAFTING_MODEL: 'm',
      MEDIA_BUYING_DRAFTING_MODEL_KEY: 'k',
    });
    assert.deepEqual(model.draftingModel, { baseUrl: 'https://models.example/v1', model: 'm', apiKey: 'k' });
  });
});
