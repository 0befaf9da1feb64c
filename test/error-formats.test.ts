/**
 * Every platform error code, in every service, is answered in that service's documented error body (the error schema
 * its OpenAPI document gives for the operator key routes' 4xx answers), with the code's status. Generated from the
 * services list and PLATFORM_ERROR_CODES, so a new code or a new service is covered without code here.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { PLATFORM_ERROR_CODES, PLATFORM_ERRORS, platformError } from '../src/platform/errors.ts';
import { implementedServices } from '../src/services/index.ts';
import { startTestPlatform } from './support/platform.ts';

interface OpenApi {
  paths: Record<
    string,
    Record<string, { responses: Record<string, { content?: Record<string, { schema: object }> }> }>
  >;
}

describe('error formats: every platform code in every service', () => {
  for (const service of implementedServices) {
    test(`${service.name}: each platform code gives a documented error body; the reachable ones end to end`, async () => {
      const platform = await startTestPlatform({ services: [service] });
      try {
        const app = platform.app(service.name);
        const doc = (await app.inject({ method: 'GET', url: '/openapi.json' })).json() as OpenApi;
        const schema = doc.paths['/_ops/keys']!.post!.responses['400']!.content!['application/json']!.schema;
        const ajv = new Ajv2020({ strict: false, allErrors: true });
        addFormats.default(ajv);
        const documented = ajv.compile(schema);
        const request = { id: 'req-1' };

        for (const code of PLATFORM_ERROR_CODES) {
          const { body } = service.formatError(platformError(code, `a ${code} error`), request);
          assert.ok(
            documented(body),
            `${code}: ${JSON.stringify(body)} ${ajv.errorsText(documented.errors)}`,
          );
          assert.ok(!JSON.stringify(body).includes('undefined'), code);
        }

        const ops = { authorization: platform.operatorAuth };
        const cases: { code: keyof typeof PLATFORM_ERRORS; res: Awaited<ReturnType<typeof app.inject>> }[] = [
          { code: 'not_found', res: await app.inject({ method: 'GET', url: '/no/such/route' }) },
          { code: 'operator_unauthenticated', res: await app.inject({ method: 'GET', url: '/_ops/keys' }) },
          {
            code: 'bad_request',
            res: await app.inject({
              method: 'POST',
              url: '/_ops/keys',
              headers: { ...ops, 'content-type': 'application/json' },
              payload: '{"label":',
            }),
          },
          {
            code: 'unsupported_media_type',
            res: await app.inject({
              method: 'POST',
              url: '/_ops/keys',
              headers: { ...ops, 'content-type': 'application/xml' },
              payload: '<key/>',
            }),
          },
          {
            code: 'validation_failed',
            res: await app.inject({ method: 'POST', url: '/_ops/keys/0/revoke', headers: ops }),
          },
        ];
        for (const { code, res } of cases) {
          assert.equal(res.statusCode, PLATFORM_ERRORS[code], `${code}: ${res.body}`);
          assert.ok(documented(res.json()), `${code}: ${res.body}`);
        }
      } finally {
        await platform.close();
      }
    });
  }
});
