import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { describe, test } from 'node:test';
import semver from 'semver';
import { startTestPlatform } from '../src/platform/testing.ts';
import { implementedServices } from '../src/services/index.ts';

const ROOT = path.resolve(import.meta.dirname, '..');
const SERVICES = path.join(ROOT, 'src', 'services');
const PLATFORM = path.join(ROOT, 'src', 'platform');

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

/** The HTTP layer of a service or of the platform: the only files that may import Fastify. */
function isHttpLayer(file: string): boolean {
  const base = path.basename(file);
  return (
    /(^|-)routes?\.ts$/.test(base) ||
    file.includes(`${path.sep}routes${path.sep}`) ||
    base === 'index.ts' ||
    file.includes(`${path.sep}test${path.sep}`) ||
    (file.startsWith(PLATFORM) &&
      ['http.ts', 'rate-limit.ts', 'runtime.ts', 'testing.ts', 'service.ts'].includes(base))
  );
}

describe('architecture (DESIGN.md, Layout rules)', () => {
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

  test('a service imports only the platform and its own folder, never another service', () => {
    const violations: string[] = [];
    for (const service of readdirSync(SERVICES)) {
      const dir = path.join(SERVICES, service);
      if (!statSync(dir).isDirectory()) continue;
      for (const file of sourceFiles(dir)) {
        for (const spec of importsOf(readFileSync(file, 'utf8'))) {
          if (!spec.startsWith('.')) continue;
          const target = path.resolve(path.dirname(file), spec);
          const inOwn = target.startsWith(dir + path.sep);
          const inPlatform = target.startsWith(PLATFORM + path.sep);
          if (!inOwn && !inPlatform) violations.push(`${path.relative(ROOT, file)} -> ${spec}`);
        }
      }
    }
    assert.deepEqual(violations, []);
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
