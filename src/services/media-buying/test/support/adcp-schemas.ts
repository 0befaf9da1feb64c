/**
 * AdCP's own JSON Schemas (draft-07, copied unchanged into `test/fixtures/adcp-schemas/` by
 * `scripts/vendor-adcp-schemas.ts`), loaded once into one Ajv instance so tests validate tool arguments and results
 * against them.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { Ajv, type ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';

const ROOT = join(import.meta.dirname, '..', '..', '..', '..', '..', 'test', 'fixtures', 'adcp-schemas');

function* jsonFiles(dir: string): Generator<string> {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) yield* jsonFiles(path);
    else if (entry.name.endsWith('.json')) yield path;
  }
}

let ajv: Ajv | undefined;
const compiled = new Map<string, ValidateFunction>();

function instance(): Ajv {
  if (ajv) return ajv;
  // AdCP's schemas use vendor keywords and formats of their own: not strict, but every standard keyword is checked.
  ajv = new Ajv({ strict: false, allErrors: true, validateFormats: true });
  addFormats.default(ajv);
  for (const file of jsonFiles(ROOT))
    ajv.addSchema(JSON.parse(readFileSync(file, 'utf8')), `/schemas/${relative(ROOT, file)}`);
  return ajv;
}

/**
 * Validates `value` against the AdCP schema at `path` (relative to `static/schemas/source`, e.g.
 * `media-buy/create-media-buy-response.json`).
 * @returns the Ajv errors (empty when valid).
 */
export function adcpSchemaErrors(path: string, value: unknown): { instancePath: string; message?: string }[] {
  let validate = compiled.get(path);
  if (!validate) {
    validate = instance().getSchema(`/schemas/${path}`);
    if (!validate) throw new Error(`no AdCP schema ${path}`);
    compiled.set(path, validate);
  }
  return validate(value)
    ? []
    : (validate.errors ?? []).map((e) => ({ instancePath: e.instancePath, message: e.message }));
}
