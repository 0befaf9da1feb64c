import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  ApiError,
  ConfigError,
  describeIssues,
  internalError,
  isPlatformErrorCode,
  PLATFORM_ERROR_CODES,
  PLATFORM_ERRORS,
  platformError,
  reasonPhrase,
  ValidationError,
} from '../../src/platform/errors.ts';
import { toApiError } from '../../src/platform/http.ts';

describe('platform: errors (ApiError, ValidationError, internalError, toApiError)', () => {
  test('ApiError carries status, code, message, details, headers and cause', () => {
    const cause = new Error('root');
    const e = new ApiError(429, 'rate_limited', 'Slow down.', {
      details: { limit: 5 },
      headers: { 'retry-after': '3' },
      cause,
    });
    assert.ok(e instanceof Error);
    assert.equal(e.name, 'ApiError');
    assert.equal(e.status, 429);
    assert.equal(e.code, 'rate_limited');
    assert.equal(e.message, 'Slow down.');
    assert.deepEqual(e.details, { limit: 5 });
    assert.deepEqual(e.headers, { 'retry-after': '3' });
    assert.equal(e.cause, cause);
    const bare = new ApiError(404, 'not_found', 'Nope.');
    assert.equal(bare.details, undefined);
    assert.equal(bare.headers, undefined);
    assert.equal(bare.cause, undefined);
  });

  test('ValidationError is a 400 validation_failed listing every issue', () => {
    const issues = [
      { location: 'body', field: 'amount', message: 'is required' },
      { location: 'query', field: 'limit', message: 'must be integer' },
    ];
    const e = new ValidationError(issues);
    assert.ok(e instanceof ApiError);
    assert.equal(e.status, 400);
    assert.equal(e.code, 'validation_failed');
    assert.equal(e.message, 'The request is invalid.');
    assert.deepEqual(e.issues, issues);
    assert.deepEqual(e.details, { issues });
    assert.equal(new ValidationError([], 'custom').message, 'custom');
  });

  test('internalError never echoes the cause', () => {
    const cause = new Error('password=hunter2 at db.internal:5432');
    const e = internalError(cause);
    assert.equal(e.status, 500);
    assert.equal(e.code, 'internal');
    assert.equal(e.cause, cause);
    assert.ok(!e.message.includes('hunter2'));
    assert.match(e.message, /request id/);
  });

  test('platform codes: a closed list with their statuses; platformError uses the status; reason phrases from node:http', () => {
    assert.deepEqual(PLATFORM_ERROR_CODES, Object.keys(PLATFORM_ERRORS));
    assert.ok(PLATFORM_ERROR_CODES.every(isPlatformErrorCode));
    assert.equal(isPlatformErrorCode('key_missing'), false);
    assert.equal(isPlatformErrorCode('toString'), false, 'own keys only, not the prototype');
    const e = platformError('payload_too_large', 'too big');
    assert.deepEqual([e.status, e.code, e.message], [413, 'payload_too_large', 'too big']);
    assert.equal(platformError('bad_request', 'URI too long', { status: 414 }).status, 414);
    assert.equal(reasonPhrase(404), 'Not Found');
    assert.equal(reasonPhrase(422), 'Unprocessable Entity');
    assert.equal(reasonPhrase(599), 'Error');
    const closing = toApiError(Object.assign(new Error('closing'), { statusCode: 503 }));
    assert.deepEqual([closing.status, closing.code], [503, 'service_unavailable']);
    assert.doesNotMatch(closing.message, /closing/);
  });

  test('ConfigError is a named Error', () => {
    const e = new ConfigError('PORT bad');
    assert.ok(e instanceof Error);
    assert.equal(e.name, 'ConfigError');
    assert.equal(e.message, 'PORT bad');
  });

  test('toApiError passes ApiErrors through unchanged', () => {
    const e = new ApiError(402, 'payment_required', 'Pay.');
    assert.equal(toApiError(e), e);
  });

  test('toApiError maps framework 4xx errors to stable codes, keeping their message', () => {
    const cases: [number, string][] = [
      [413, 'payload_too_large'],
      [415, 'unsupported_media_type'],
      [404, 'not_found'],
      [429, 'rate_limited'],
      [400, 'bad_request'],
      [405, 'bad_request'],
    ];
    for (const [statusCode, code] of cases) {
      const mapped = toApiError(Object.assign(new Error('Body is not valid JSON'), { statusCode }));
      assert.equal(mapped.status, statusCode);
      assert.equal(mapped.code, code, String(statusCode));
      assert.equal(mapped.message, 'Body is not valid JSON');
    }
  });

  test('toApiError turns anything else into the generic 500 without the internal message', () => {
    for (const thrown of [
      new Error('relation "secret_table" does not exist'),
      Object.assign(new Error('upstream blew up'), { statusCode: 502 }),
      'a string',
      undefined,
    ]) {
      const mapped = toApiError(thrown);
      assert.equal(mapped.status, 500);
      assert.equal(mapped.code, 'internal');
      assert.ok(!/secret_table|upstream/.test(mapped.message));
    }
  });

  test('toApiError turns Ajv validation errors into a ValidationError with field issues', () => {
    const fe = Object.assign(new Error('bad'), {
      statusCode: 400,
      validationContext: 'querystring',
      validation: [
        {
          keyword: 'required',
          instancePath: '',
          params: { missingProperty: 'limit' },
          message: "must have required property 'limit'",
        },
        { keyword: 'enum', instancePath: '/sort', params: { allowedValues: ['asc', 'desc'] }, message: 'x' },
        {
          keyword: 'additionalProperties',
          instancePath: '',
          params: { additionalProperty: 'zzz' },
          message: 'x',
        },
      ],
    });
    const mapped = toApiError(fe);
    assert.ok(mapped instanceof ValidationError);
    assert.deepEqual(mapped.issues, [
      { location: 'query', field: 'limit', message: 'is required' },
      { location: 'query', field: 'sort', message: 'must be one of "asc", "desc"' },
      { location: 'query', field: 'zzz', message: 'is not an allowed field' },
    ]);
    assert.equal(
      mapped.message,
      'Invalid request: query.limit is required; query.sort must be one of "asc", "desc"; query.zzz is not an allowed field.',
    );
  });

  test('an Ajv const error names the one allowed value', () => {
    const fe = Object.assign(new Error('bad'), {
      statusCode: 400,
      validationContext: 'body',
      validation: [
        {
          keyword: 'const',
          instancePath: '/data/type',
          params: { allowedValue: 'credential' },
          message: 'x',
        },
      ],
    });
    const mapped = toApiError(fe) as ValidationError;
    assert.deepEqual(mapped.issues, [
      { location: 'body', field: 'data/type', message: 'must be "credential"' },
    ]);
  });

  test('describeIssues names at most ten issues, then counts the rest; locations are optional', () => {
    const issues = Array.from({ length: 12 }, (_, i) => ({
      location: 'body',
      field: `items/${i}`,
      message: 'bad',
    }));
    const text = describeIssues(issues);
    assert.equal(text.split('; ').length, 10);
    assert.match(text, /^body\.items\.0 bad; body\.items\.1 bad;/);
    assert.match(text, /body\.items\.9 bad \(and 2 more\)$/);
    assert.equal(describeIssues(issues.slice(0, 1), { withLocation: false }), 'items.0 bad');
    assert.equal(
      describeIssues([{ location: 'body', field: '', message: 'must be an object' }]),
      'body must be an object',
    );
  });
});
