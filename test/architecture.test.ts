import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { describe, test } from 'node:test';
import semver from 'semver';
import { implementedServices } from '../src/services/index.ts';
import { startTestPlatform } from './support/platform.ts';

const ROOT = path.resolve(import.meta.dirname, '..');
const SERVICES = path.join(ROOT, 'src', 'services');
const PLATFORM = path.join(ROOT, 'src', 'platform');
/** Test support (test platforms, the CLI as a child process, waits): tests only, never production code. */
const TEST_SUPPORT = path.join(ROOT, 'test', 'support');

/** True for a file of a service's `test/` folder. */
function isTestFile(file: string): boolean {
  return file.includes(`${path.sep}test${path.sep}`);
}

function sourceFiles(dir: string): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(dir)) {
    const full = path.join(dir, entry);
    if (statSync(full).isDirectory()) out.push(...sourceFiles(full));
    else if (entry.endsWith('.ts')) out.push(full);
  }
  return out;
}

/** Every module specifier a file imports (static, dynamic, re-exports). */
export function importsOf(source: string): string[] {
  const specs: string[] = [];
  const re =
    /(?:import|export)\s[^'"]*?from\s*['"]([^'"]+)['"]|import\s*\(\s*['"]([^'"]+)['"]\s*\)|import\s+['"]([^'"]+)['"]/g;
  for (const m of source.matchAll(re)) specs.push((m[1] ?? m[2] ?? m[3])!);
  return specs;
}

/** Platform files that are HTTP layer (they build or plug into the Fastify app). */
const PLATFORM_HTTP_FILES = [
  'http.ts',
  'auth.ts',
  'credential-routes.ts',
  'streams.ts',
  'rate-limit.ts',
  'runtime.ts',
  'service.ts',
];

/**
 * Where a file of a service sits: its service, its module folder (the first folder under the service, such as
 * `routes`, or `mcp` and `rest` in a large service; '' for a file at the top) and its path inside the service.
 */
export function placeOf(file: string): { service: string; folder: string; rel: string } | undefined {
  const rel = path.relative(SERVICES, file);
  if (rel.startsWith('..')) return undefined;
  const [service, ...rest] = rel.split(path.sep);
  return { service: service!, folder: rest.length > 1 ? rest[0]! : '', rel: rest.join('/') };
}

/** Every relative import of every service's files: the service, its folder, the importing file, the specifier and its resolved path. */
function* serviceRelativeImports() {
  for (const service of readdirSync(SERVICES)) {
    const dir = path.join(SERVICES, service);
    if (!statSync(dir).isDirectory()) continue;
    for (const file of sourceFiles(dir))
      for (const spec of importsOf(readFileSync(file, 'utf8')))
        if (spec.startsWith('.'))
          yield { service, dir, file, spec, target: path.resolve(path.dirname(file), spec) };
  }
}

/**
 * The HTTP layer of a service or of the platform: the only files that may import Fastify. In a service: a
 * `*-routes.ts` file or anything in a `routes/` folder (at any depth: `mcp/routes/tools.ts`), the service's own
 * `index.ts` (its descriptor; not a sub-folder's index), and tests.
 */
export function isHttpLayer(file: string): boolean {
  const base = path.basename(file);
  const place = placeOf(file);
  return (
    /(^|-)routes?\.ts$/.test(base) ||
    file.includes(`${path.sep}routes${path.sep}`) ||
    file.includes(`${path.sep}test${path.sep}`) ||
    (place !== undefined && place.rel === 'index.ts') ||
    (file.startsWith(PLATFORM) && PLATFORM_HTTP_FILES.includes(base))
  );
}

/**
 * A service's module folders stay apart: code outside folder `x` (the top, or another folder) reaches into it only
 * through `x/index.ts`. `db/` (the tables every part uses) and tests are exempt.
 * @returns a reason when `file` importing `target` breaks the rule, else undefined.
 */
export function crossFolderViolation(file: string, target: string): string | undefined {
  const from = placeOf(file);
  const to = placeOf(target);
  if (!from || !to || from.service !== to.service) return undefined;
  if (to.folder === '' || to.folder === 'db' || to.folder === from.folder || from.folder === 'test')
    return undefined;
  if (to.rel === `${to.folder}/index.ts`) return undefined;
  return `${from.rel} reaches into ${to.rel} (import ${to.folder}/index.ts instead)`;
}

describe('architecture (docs/architecture.md, layout rules)', () => {
  test('every installed dependency supports Node 20.19 (package-lock engines)', () => {
    const lock = JSON.parse(readFileSync(path.join(ROOT, 'package-lock.json'), 'utf8')) as {
      packages: Record<string, { version?: string; engines?: { node?: string } | string[] }>;
    };
    const bad: string[] = [];
    for (const [name, pkg] of Object.entries(lock.packages)) {
      const range = !Array.isArray(pkg.engines) ? pkg.engines?.node : undefined;
      if (name && range && !semver.satisfies('20.19.0', range))
        bad.push(`${name}@${pkg.version} needs node ${range}`);
    }
    assert.deepEqual(bad, []);
  });

  test('importsOf finds static, type, dynamic and re-export imports', () => {
    const found = importsOf(
      "import a from 'x';\nimport type { B } from \"../y.ts\";\nexport { c } from './z.ts';\nconst d = await import('w');\nimport 'side';",
    );
    assert.deepEqual(found.sort(), ['../y.ts', './z.ts', 'side', 'w', 'x']);
  });

  test('a service imports only the platform and its own folder (its tests also test/support), never another service', () => {
    const violations: string[] = [];
    for (const { dir, file, spec, target } of serviceRelativeImports()) {
      const inOwn = target.startsWith(dir + path.sep);
      const inPlatform = target.startsWith(PLATFORM + path.sep);
      const testSupport = isTestFile(file) && target.startsWith(TEST_SUPPORT + path.sep);
      if (!inOwn && !inPlatform && !testSupport) violations.push(`${path.relative(ROOT, file)} -> ${spec}`);
    }
    assert.deepEqual(violations, []);
  });

  test('layout rules hold in the sub-folders of a large service (media-buying/{rest,mcp,oauth,sms})', () => {
    const at = (rel: string) => path.join(SERVICES, 'media-buying', ...rel.split('/'));
    assert.equal(isHttpLayer(at('index.ts')), true, "the service's descriptor");
    assert.equal(isHttpLayer(at('mcp/index.ts')), false, "a sub-folder's index is not the descriptor");
    assert.equal(isHttpLayer(at('rest/routes/organizations.ts')), true);
    assert.equal(isHttpLayer(at('mcp/mcp-routes.ts')), true);
    assert.equal(isHttpLayer(at('sms/outbound-queue.ts')), false);
    assert.equal(isHttpLayer(at('mcp/test/tools.test.ts')), true);
    assert.equal(crossFolderViolation(at('mcp/tools.ts'), at('rest/index.ts')), undefined);
    assert.equal(crossFolderViolation(at('mcp/tools.ts'), at('db/schema.ts')), undefined);
    assert.equal(crossFolderViolation(at('mcp/tools.ts'), at('media-buying-errors.ts')), undefined);
    assert.equal(crossFolderViolation(at('mcp/tools.ts'), at('mcp/adcp/schemas.ts')), undefined);
    assert.equal(crossFolderViolation(at('test/x.test.ts'), at('sms/carrier.ts')), undefined);
    assert.match(crossFolderViolation(at('mcp/tools.ts'), at('rest/campaigns.ts')) ?? '', /rest\/index\.ts/);
    assert.match(crossFolderViolation(at('index.ts'), at('sms/carrier.ts')) ?? '', /sms\/index\.ts/);
  });

  test("a service's module folders import each other only through their index.ts", () => {
    const violations: string[] = [];
    for (const { service, file, target } of serviceRelativeImports()) {
      const reason = crossFolderViolation(file, target);
      if (reason) violations.push(`${service}: ${reason}`);
    }
    assert.deepEqual(violations, []);
  });

  test('production code (platform and services outside their tests) never imports test support', () => {
    const violations = [...sourceFiles(SERVICES), ...sourceFiles(PLATFORM)]
      .filter((file) => !isTestFile(file))
      .flatMap((file) =>
        importsOf(readFileSync(file, 'utf8'))
          .filter(
            (spec) => spec.startsWith('.') && path.resolve(path.dirname(file), spec).startsWith(TEST_SUPPORT),
          )
          .map((spec) => `${path.relative(ROOT, file)} -> ${spec}`),
      );
    assert.deepEqual(violations, []);
  });

  test('the platform raises its own errors only through platformError (their codes stay the closed PlatformErrorCode)', () => {
    const raw = sourceFiles(PLATFORM)
      .filter(
        (file) => path.basename(file) !== 'errors.ts' && /new ApiError\(/.test(readFileSync(file, 'utf8')),
      )
      .map((file) => path.relative(ROOT, file));
    assert.deepEqual(raw, []);
  });

  test('the platform imports no service', () => {
    const violations = sourceFiles(PLATFORM).flatMap((file) =>
      importsOf(readFileSync(file, 'utf8'))
        .filter((spec) => spec.startsWith('.') && path.resolve(path.dirname(file), spec).startsWith(SERVICES))
        .map((spec) => `${path.relative(ROOT, file)} -> ${spec}`),
    );
    assert.deepEqual(violations, []);
  });

  test('domain code never imports Fastify (only routes, index.ts and the platform HTTP layer do)', () => {
    const violations = [...sourceFiles(SERVICES), ...sourceFiles(PLATFORM)]
      .filter((file) => !isHttpLayer(file))
      .flatMap((file) =>
        importsOf(readFileSync(file, 'utf8'))
          .filter((spec) => spec === 'fastify' || spec.startsWith('@fastify/') || spec.startsWith('fastify-'))
          .map((spec) => `${path.relative(ROOT, file)} -> ${spec}`),
      );
    assert.deepEqual(violations, []);
  });

  test('every route of every service declares operationId, tags and summary (in its OpenAPI)', async () => {
    for (const service of implementedServices) {
      const platform = await startTestPlatform({ services: [service] });
      try {
        const doc = (
          await platform.app(service.name).inject({ method: 'GET', url: '/openapi.json' })
        ).json() as {
          paths: Record<string, Record<string, { operationId?: string; tags?: string[]; summary?: string }>>;
        };
        const missing: string[] = [];
        const ids = new Set<string>();
        for (const [route, ops] of Object.entries(doc.paths)) {
          for (const [method, op] of Object.entries(ops)) {
            if (!op.operationId || !op.tags?.length || !op.summary)
              missing.push(`${method.toUpperCase()} ${route}`);
            if (op.operationId && ids.has(op.operationId))
              missing.push(`duplicate operationId ${op.operationId}`);
            if (op.operationId) ids.add(op.operationId);
          }
        }
        assert.ok(ids.size > 0);
        assert.deepEqual(missing, [], service.name);
      } finally {
        await platform.close();
      }
    }
  });
});
