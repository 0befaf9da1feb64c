/**
 * The small expression language of the built-in agents and workflow conditions (README "Templates and
 * conditions"): `{{ path }}` placeholders with dotted paths into a context object (`input.customer.name`,
 * `nodes.classify.label`, `tools.0.result`), optional filters (`{{ message | upper }}`), JSON templates whose
 * string leaves may be a whole placeholder (keeping the value's type), and conditions on run data. Pure functions
 * with bounded work: no code is evaluated.
 */

/** Filters a placeholder may apply, in order (`{{ x | trim | upper }}`). */
const FILTERS: Record<string, (value: unknown) => unknown> = {
  upper: (v) => text(v).toUpperCase(),
  lower: (v) => text(v).toLowerCase(),
  trim: (v) => text(v).trim(),
  json: (v) => JSON.stringify(v ?? null),
  length: (v) => (Array.isArray(v) ? v.length : typeof v === 'string' ? [...v].length : 0),
  number: (v) => {
    const n = Number(v);
    return Number.isFinite(n) ? n : null;
  },
};

/** Names of the filters (for definition checks and the README). */
export const FILTER_NAMES = Object.keys(FILTERS);

const PLACEHOLDER = /\{\{\s*([^{}]*?)\s*\}\}/g;
const WHOLE = /^\{\{\s*([^{}]*?)\s*\}\}$/;
const PATH = /^[A-Za-z0-9_$#-]+(\.[A-Za-z0-9_$#-]+)*$/;

/** Text of a value in a rendered template: strings as they are, null/undefined empty, others as JSON. */
function text(value: unknown): string {
  if (value === undefined || value === null) return '';
  return typeof value === 'string' ? value : JSON.stringify(value);
}

/** The value at a dotted `path` of `context` (array indexes as numbers), or undefined. */
export function resolvePath(context: unknown, path: string): unknown {
  let current: unknown = context;
  for (const segment of path.split('.')) {
    if (current === null || typeof current !== 'object') return undefined;
    if (!Object.hasOwn(current as object, segment)) return undefined;
    current = (current as Record<string, unknown>)[segment];
  }
  return current;
}

/** The problems of one placeholder expression (`path | filter ...`), empty when it is well-formed. */
function expressionProblems(expression: string): string[] {
  const [path, ...filters] = expression.split('|').map((s) => s.trim());
  const problems: string[] = [];
  if (!path || !PATH.test(path)) problems.push(`'${expression}' is not a dotted path`);
  for (const f of filters)
    if (!FILTERS[f]) problems.push(`unknown filter '${f}' (${FILTER_NAMES.join(', ')})`);
  return problems;
}

function evaluate(expression: string, context: unknown): unknown {
  const [path, ...filters] = expression.split('|').map((s) => s.trim());
  let value = resolvePath(context, path ?? '');
  for (const f of filters) value = FILTERS[f]?.(value);
  return value;
}

/** The problems of a text template's placeholders, empty when every one is well-formed. */
export function templateProblems(template: string): string[] {
  return [...template.matchAll(PLACEHOLDER)].flatMap((m) => expressionProblems(m[1]!));
}

/** Renders a text template: each `{{ expression }}` replaced by its value's text. */
export function renderText(template: string, context: unknown): string {
  return template.replace(PLACEHOLDER, (_m, expression: string) => text(evaluate(expression, context)));
}

/** The problems of every placeholder in a JSON template. */
export function jsonTemplateProblems(template: unknown): string[] {
  const out: string[] = [];
  const pending: unknown[] = [template];
  while (pending.length > 0) {
    const node = pending.pop();
    if (typeof node === 'string') out.push(...templateProblems(node));
    else if (Array.isArray(node)) pending.push(...node);
    else if (node && typeof node === 'object') pending.push(...Object.values(node));
  }
  return out;
}

/**
 * Renders a JSON template: a string that is one whole placeholder becomes the value itself (an object stays an
 * object; a missing value becomes null), other strings are rendered as text, everything else is copied.
 */
export function renderJson(template: unknown, context: unknown): unknown {
  if (typeof template === 'string') {
    const whole = WHOLE.exec(template);
    if (whole) return evaluate(whole[1]!, context) ?? null;
    return renderText(template, context);
  }
  if (Array.isArray(template)) return template.map((item) => renderJson(item, context));
  if (template && typeof template === 'object')
    return Object.fromEntries(
      Object.entries(template as Record<string, unknown>).map(([k, v]) => [k, renderJson(v, context)]),
    );
  return template;
}

/**
 * Operators of a condition: comparisons, `exists`, `contains` (substring or array element), `starts_with`. No
 * regular expressions: a user's pattern could backtrack for minutes on a user's text.
 */
export const CONDITION_OPERATORS = [
  'eq',
  'ne',
  'gt',
  'gte',
  'lt',
  'lte',
  'exists',
  'contains',
  'starts_with',
] as const;

/** A condition on run data: one comparison, or `all` / `any` / `not` of conditions. */
export type Condition =
  | { path: string; op: (typeof CONDITION_OPERATORS)[number]; value?: unknown }
  | { all: Condition[] }
  | { any: Condition[] }
  | { not: Condition };

/** The roots a workflow condition's path starts from: the run's input, earlier nodes' outputs, the incoming token. */
export const CONDITION_ROOTS = ['input', 'nodes', 'previous'] as const;

/**
 * The problems of a condition, each with its place (`condition.all.0.op: ...`); empty when it is well-formed.
 * Strict: a path starts at one of `scope.roots` (default {@link CONDITION_ROOTS}; with `nodes.<id>`, `<id>` must be
 * in `scope.nodeIds` when given: the nodes that run before the condition); `gt`/`gte`/`lt`/`lte` compare with a
 * number or a string; `eq`/`ne`/`contains` need a `value`; `exists` takes none; `starts_with` needs a string.
 */
export function conditionProblems(
  condition: unknown,
  at = 'condition',
  scope: { roots?: readonly string[]; nodeIds?: ReadonlySet<string> } = {},
  depth = 0,
): string[] {
  const roots = scope.roots ?? CONDITION_ROOTS;
  const nodeIds = scope.nodeIds;
  if (depth > 8) return [`${at}: nested too deeply (at most 8 levels)`];
  if (!condition || typeof condition !== 'object' || Array.isArray(condition))
    return [`${at}: must be an object`];
  const c = condition as Record<string, unknown>;
  for (const group of ['all', 'any'] as const)
    if (group in c) {
      const list = c[group];
      if (!Array.isArray(list) || list.length === 0 || list.length > 20)
        return [`${at}.${group}: must be a list of 1-20 conditions`];
      return list.flatMap((item, i) => conditionProblems(item, `${at}.${group}.${i}`, scope, depth + 1));
    }
  if ('not' in c) return conditionProblems(c.not, `${at}.not`, scope, depth + 1);
  return comparisonProblems(c, at, roots, nodeIds);
}

/** The problems of one comparison `{path, op, value?}` of a condition (see {@link conditionProblems}). */
function comparisonProblems(
  c: Record<string, unknown>,
  at: string,
  roots: readonly string[],
  nodeIds: ReadonlySet<string> | undefined,
): string[] {
  const problems: string[] = [];
  for (const key of Object.keys(c))
    if (!['path', 'op', 'value'].includes(key)) problems.push(`${at}: has no field '${key}'`);
  if (typeof c.path !== 'string' || !PATH.test(c.path)) problems.push(`${at}.path: must be a dotted path`);
  else {
    const [root, second] = c.path.split('.');
    if (!roots.includes(root!))
      problems.push(`${at}.path: must start with ${roots.join(', ')} (got '${root}')`);
    else if (root === 'nodes' && nodeIds !== undefined && (second === undefined || !nodeIds.has(second)))
      problems.push(`${at}.path: '${c.path}' names no node that runs before this condition`);
  }
  if (!CONDITION_OPERATORS.includes(c.op as never))
    problems.push(`${at}.op: must be one of ${CONDITION_OPERATORS.join(', ')}`);
  const ordered = c.op === 'gt' || c.op === 'gte' || c.op === 'lt' || c.op === 'lte';
  if (ordered && typeof c.value !== 'number' && typeof c.value !== 'string')
    problems.push(`${at}.value: ${String(c.op)} compares with a number or a string`);
  if ((c.op === 'eq' || c.op === 'ne' || c.op === 'contains') && c.value === undefined)
    problems.push(`${at}.value: ${c.op} needs a value`);
  if (c.op === 'exists' && c.value !== undefined) problems.push(`${at}.value: exists takes no value`);
  if (c.op === 'starts_with' && typeof c.value !== 'string') problems.push(`${at}.value: must be a string`);
  return problems;
}

/**
 * A condition that cannot be decided on the run's data: `condition_field_missing` (the path names nothing, for any
 * operator but `exists`) or `condition_type_mismatch` (a number compared with a string, `contains` on a number,
 * ...). The run fails with it instead of taking a branch by accident.
 */
export class ConditionError extends Error {
  constructor(
    readonly code: 'condition_field_missing' | 'condition_type_mismatch',
    message: string,
  ) {
    super(message);
    this.name = 'ConditionError';
  }
}

function typeName(value: unknown): string {
  return value === null ? 'null' : Array.isArray(value) ? 'array' : typeof value;
}

function compare(a: unknown, b: unknown): number | undefined {
  if (typeof a === 'number' && typeof b === 'number') return a - b;
  if (typeof a === 'string' && typeof b === 'string') return a < b ? -1 : a > b ? 1 : 0;
  return undefined;
}

function deepEqual(a: unknown, b: unknown): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

/**
 * Evaluates a well-formed condition ({@link conditionProblems}) against `data`, strictly: only `exists` accepts a
 * missing field; ordered comparisons need a value of the same type as the condition's; `contains` needs a string or
 * an array; `starts_with` a string. `all` / `any` stop at the first deciding member.
 * @throws ConditionError when the data cannot decide it.
 */
export function evaluateCondition(condition: Condition, data: unknown): boolean {
  if ('all' in condition) return condition.all.every((c) => evaluateCondition(c, data));
  if ('any' in condition) return condition.any.some((c) => evaluateCondition(c, data));
  if ('not' in condition) return !evaluateCondition(condition.not, data);
  const actual = resolvePath(data, condition.path);
  const expected = condition.value;
  if (condition.op === 'exists') return actual !== undefined && actual !== null;
  if (actual === undefined)
    throw new ConditionError(
      'condition_field_missing',
      `The condition reads '${condition.path}', which the run's data does not have.`,
    );
  const mismatch = (wanted: string) =>
    new ConditionError(
      'condition_type_mismatch',
      `The condition ${condition.op} on '${condition.path}' needs ${wanted}; it is ${typeName(actual)}.`,
    );
  switch (condition.op) {
    case 'eq':
      return deepEqual(actual, expected);
    case 'ne':
      return !deepEqual(actual, expected);
    case 'gt':
    case 'gte':
    case 'lt':
    case 'lte': {
      const order = compare(actual, expected);
      if (order === undefined) throw mismatch(`a ${typeName(expected)}`);
      return condition.op === 'gt'
        ? order > 0
        : condition.op === 'gte'
          ? order >= 0
          : condition.op === 'lt'
            ? order < 0
            : order <= 0;
    }
    case 'contains':
      if (typeof actual === 'string') {
        if (typeof expected !== 'string')
          throw new ConditionError(
            'condition_type_mismatch',
            `The condition contains on '${condition.path}' looks for a ${typeName(expected)} in a string.`,
          );
        return actual.includes(expected);
      }
      if (!Array.isArray(actual)) throw mismatch('a string or an array');
      return actual.some((item) => deepEqual(item, expected));
    case 'starts_with':
      if (typeof actual !== 'string') throw mismatch('a string');
      return actual.startsWith(expected as string);
  }
}
