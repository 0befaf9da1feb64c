/**
 * Answers as their schemas say: the one JSON type of the tests, and typed bodies checked against the response
 * schemas the routes declare (TypeBox `Static<>`), instead of `Record<string, any>`.
 */
import assert from 'node:assert/strict';
import type { Static, TSchema } from '@sinclair/typebox';
import { Ajv, type ValidateFunction } from 'ajv';
import { isCalendarDate, isRfc3339DateTime } from '../../src/platform/schemas.ts';

// Ajv (JSON Schema) rather than TypeBox's Value.Check: it also checks the `Type.Unsafe` schemas (StringEnum) and uses
// the platform's date formats, as the request validator does.
const ajv = new Ajv({ allErrors: true, strict: false });
ajv.addFormat('date', isCalendarDate);
ajv.addFormat('date-time', isRfc3339DateTime);
const validators = new WeakMap<object, ValidateFunction>();

/** Any JSON value. */
export type Json = string | number | boolean | null | Json[] | { [key: string]: Json };

/**
 * The JSON body of `res` as `schema` describes it: parsed, checked against the schema (a mismatch fails the test
 * naming the first differences) and typed `Static<schema>`.
 * @param res an `inject()` answer or anything with the body text in `body` or `payload`.
 */
export function bodyAs<S extends TSchema>(res: { body?: string; payload?: string }, schema: S): Static<S> {
  const value: unknown = JSON.parse(res.body ?? res.payload ?? '');
  let validate = validators.get(schema);
  if (!validate) {
    validate = ajv.compile(schema);
    validators.set(schema, validate);
  }
  if (!validate(value)) assert.fail(`the body does not match its schema: ${ajv.errorsText(validate.errors)}`);
  return value as Static<S>;
}

/** The parts of an OpenAPI 3.1 document the tests read. */
export interface OpenApiDoc {
  paths: Record<
    string,
    Record<
      string,
      {
        operationId?: string;
        security?: Record<string, string[]>[];
        parameters?: { name: string; in: string; schema: Record<string, unknown> & { type?: string } }[];
        responses: Record<string, { content?: Record<string, { schema: object }> }>;
      }
    >
  >;
  components: { securitySchemes: Record<string, Record<string, unknown>>; schemas?: Record<string, object> };
}
