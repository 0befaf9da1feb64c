import { randomInt } from 'node:crypto';

/**
 * The event-type catalogue (spec 002 section G; names from NOTES.md) and the `data` shape of each type.
 * Entity types are `business` and `prospect`; each has its own list of event names.
 */
export type EntityType = 'business' | 'prospect';
export const ENTITY_TYPES: readonly EntityType[] = ['business', 'prospect'];

const SIZE_DEPARTMENTS = [
  'engineering',
  'sales',
  'marketing',
  'operations',
  'customer_service',
  'all_departments',
] as const;
const HIRING_DEPARTMENTS = [
  'creative',
  'education',
  'engineering',
  'finance',
  'health',
  'human_resources',
  'legal',
  'marketing',
  'operations',
  'professional_service',
  'sales',
  'support',
  'trade',
  'unknown',
] as const;

/** Every business event name. */
export const BUSINESS_EVENT_TYPES: readonly string[] = [
  'ipo_announcement',
  'new_funding_round',
  'new_investment',
  'new_product',
  'new_office',
  'closing_office',
  'new_partnership',
  ...SIZE_DEPARTMENTS.map((d) => `increase_in_${d}_department`),
  ...SIZE_DEPARTMENTS.map((d) => `decrease_in_${d}_department`),
  ...HIRING_DEPARTMENTS.map((d) => `hiring_in_${d}_department`),
  'employee_joined_company',
  'company_award',
  'outages_and_security_breaches',
  'cost_cutting',
  'merger_and_acquisitions',
  'lawsuits_and_legal_issues',
];

/**
 * An RFC 3339 timestamp with its offset (`Z` or `+hh:mm`). Without an offset `Date.parse` would read the server's
 * local time, so such values are refused rather than guessed.
 */
export function isRfc3339(value: string): boolean {
  const m = /^(\d{4})-(\d{2})-(\d{2})[Tt ]\d{2}:\d{2}:\d{2}(\.\d{1,9})?([Zz]|[+-]\d{2}:\d{2})$/.exec(value);
  if (!m || Number.isNaN(Date.parse(value))) return false;
  // Date.parse rolls 2026-02-30 over into March; a calendar date must exist as written.
  const day = new Date(Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3])));
  return day.getUTCMonth() === Number(m[2]) - 1 && day.getUTCDate() === Number(m[3]);
}

/** Every prospect event name. */
export const PROSPECT_EVENT_TYPES: readonly string[] = [
  'prospect_changed_role',
  'prospect_changed_company',
  'prospect_job_start_anniversary',
];

const CATALOGUE: Record<EntityType, ReadonlySet<string>> = {
  business: new Set(BUSINESS_EVENT_TYPES),
  prospect: new Set(PROSPECT_EVENT_TYPES),
};

/** True when `eventName` is in the catalogue of `entityType`. */
export function isKnownEventType(entityType: EntityType, eventName: string): boolean {
  return CATALOGUE[entityType].has(eventName);
}

/** The event names of `entityType`. */
export function eventTypesOf(entityType: EntityType): readonly string[] {
  return entityType === 'business' ? BUSINESS_EVENT_TYPES : PROSPECT_EVENT_TYPES;
}

/** The type of one `data` field (see {@link dataFieldsOf}). */
export type DataFieldType =
  /** A non-empty string of at most 2,000 characters; `oneOf` / `pattern` narrow it. */
  | { kind: 'string'; oneOf?: readonly string[]; pattern?: RegExp; hint?: string }
  /** A safe integer of at least `min`; `unit` is named in the message (whole USD, people, ...). */
  | { kind: 'integer'; min: number; unit?: string }
  /** A finite number (a percentage, for example). */
  | { kind: 'number' }
  /** A calendar date `YYYY-MM-DD` that exists. */
  | { kind: 'date' }
  /** An array of non-empty strings (each at most 2,000 characters). */
  | { kind: 'string_array' }
  /** A nested object with its own fields. */
  | { kind: 'object'; fields: Readonly<Record<string, DataField>> };

/** One field of an event's `data`: its type and whether it must be present. */
export interface DataField {
  type: DataFieldType;
  required: boolean;
}

const MAX_DATA_STRING = 2000;
const req = (type: DataFieldType): DataField => ({ type, required: true });
const opt = (type: DataFieldType): DataField => ({ type, required: false });
const str: DataFieldType = { kind: 'string' };
const date: DataFieldType = { kind: 'date' };
const count: DataFieldType = { kind: 'integer', min: 0 };
const usd: DataFieldType = { kind: 'integer', min: 0, unit: 'whole US dollars' };
const currency: DataFieldType = {
  kind: 'string',
  oneOf: ['USD'],
  hint: 'amounts are whole US dollars',
};

/**
 * The field table of every catalogue type: what `data` carries, its types, and which fields are required. Fields not
 * in the table are allowed (the feed may add some) and not checked; optional fields may be omitted but, when present,
 * must have their type (`null` is not a value of any type).
 */
function buildDataFields(eventName: string): Readonly<Record<string, DataField>> {
  const size = /^(increase|decrease)_in_(.*)_department$/.exec(eventName);
  if (size)
    return {
      department: req({ kind: 'string', oneOf: [size[2]!], hint: 'the department of the event name' }),
      headcount_before: req(count),
      headcount_after: req(count),
      change_percentage: opt({ kind: 'number' }),
    };
  const hiring = /^hiring_in_(.*)_department$/.exec(eventName);
  if (hiring)
    return {
      department: req({ kind: 'string', oneOf: [hiring[1]!], hint: 'the department of the event name' }),
      open_positions: req(count),
      source: opt(str),
    };
  switch (eventName) {
    case 'new_funding_round':
      return {
        funding_stage: req(str),
        funding_date: req(date),
        amount: req(usd),
        investors: req({ kind: 'string_array' }),
        currency: opt(currency),
      };
    case 'ipo_announcement':
      return { exchange: req(str), ticker: req(str), ipo_date: opt(date) };
    case 'new_investment':
      return { investee_name: opt(str), amount: opt(usd), currency: opt(currency) };
    case 'new_product':
      return { product_name: opt(str), description: opt(str) };
    case 'new_office':
    case 'closing_office':
      return {
        location: opt({
          kind: 'object',
          fields: {
            city: opt(str),
            country_code: opt({
              kind: 'string',
              pattern: /^[A-Z]{2}$/,
              hint: 'an ISO 3166-1 alpha-2 code',
            }),
          },
        }),
      };
    case 'new_partnership':
      return { partner_name: opt(str), announced_at: opt(date) };
    case 'employee_joined_company':
      return { employee_title: opt(str), start_date: opt(date) };
    case 'company_award':
      return { award_name: opt(str), awarded_by: opt(str), award_date: opt(date) };
    case 'outages_and_security_breaches':
      return { severity: opt({ kind: 'string', oneOf: ['low', 'medium', 'high'] }), summary: opt(str) };
    case 'cost_cutting':
      return { summary: opt(str), layoffs: opt(count) };
    case 'merger_and_acquisitions':
      return {
        counterparty_name: opt(str),
        role: opt({ kind: 'string', oneOf: ['acquirer', 'target'] }),
        announced_at: opt(date),
      };
    case 'lawsuits_and_legal_issues':
      return { summary: opt(str), counterparty_name: opt(str) };
    case 'prospect_changed_role':
      return { previous_title: req(str), new_title: req(str), company_name: opt(str) };
    case 'prospect_changed_company':
      return { previous_company: req(str), new_company: req(str), new_title: opt(str) };
    case 'prospect_job_start_anniversary':
      return {
        company_name: req(str),
        years: req({ kind: 'integer', min: 1, unit: 'years' }),
        start_date: opt(date),
      };
    default:
      return {};
  }
}

const DATA_FIELDS: ReadonlyMap<string, Readonly<Record<string, DataField>>> = new Map(
  [...BUSINESS_EVENT_TYPES, ...PROSPECT_EVENT_TYPES].map((name) => [name, buildDataFields(name)]),
);

/** The `data` field table of a catalogue event type (empty for a name outside the catalogue). */
export function dataFieldsOf(eventName: string): Readonly<Record<string, DataField>> {
  return DATA_FIELDS.get(eventName) ?? {};
}

/**
 * Fields that `data` must carry for `eventName` (from {@link dataFieldsOf}). Department events name their
 * department; the funding round has `funding_stage`, `funding_date`, `amount` and `investors`.
 */
export function requiredDataFields(eventName: string): string[] {
  return Object.entries(dataFieldsOf(eventName))
    .filter(([, f]) => f.required)
    .map(([name]) => name);
}

/** True for a calendar date `YYYY-MM-DD` that exists (2026-02-30 does not). */
export function isCalendarDate(value: string): boolean {
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(value);
  if (!m) return false;
  const day = new Date(Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3])));
  return (
    day.getUTCFullYear() === Number(m[1]) &&
    day.getUTCMonth() === Number(m[2]) - 1 &&
    day.getUTCDate() === Number(m[3])
  );
}

const isNonEmptyString = (v: unknown): v is string =>
  typeof v === 'string' && v.trim() !== '' && v.length <= MAX_DATA_STRING;

/** One problem of a `data` object: `path` is a pointer below `data` (`amount`, `investors/1`, `location/city`). */
export interface DataIssue {
  path: string;
  message: string;
}

function checkValue(type: DataFieldType, value: unknown, path: string, out: DataIssue[]): void {
  const bad = (message: string, at = path) => out.push({ path: at, message });
  switch (type.kind) {
    case 'string': {
      if (!isNonEmptyString(value)) {
        bad(`must be a non-empty string of at most ${MAX_DATA_STRING} characters`);
        return;
      }
      const hint = type.hint ? ` (${type.hint})` : '';
      if (type.oneOf && !type.oneOf.includes(value))
        bad(`must be ${type.oneOf.map((v) => JSON.stringify(v)).join(' or ')}${hint}`);
      else if (type.pattern && !type.pattern.test(value)) bad(`must be ${type.hint ?? type.pattern.source}`);
      return;
    }
    case 'integer':
      if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < type.min)
        bad(
          `${type.min === 0 ? 'must be a non-negative integer' : `must be an integer of at least ${type.min}`}` +
            `${type.unit ? ` (${type.unit})` : ''}`,
        );
      return;
    case 'number':
      if (typeof value !== 'number' || !Number.isFinite(value)) bad('must be a number');
      return;
    case 'date':
      if (typeof value !== 'string' || !isCalendarDate(value)) bad('must be a calendar date YYYY-MM-DD');
      return;
    case 'string_array':
      if (!Array.isArray(value)) {
        bad('must be an array of non-empty strings');
        return;
      }
      value.forEach((item, i) => {
        if (!isNonEmptyString(item))
          bad(`must be a non-empty string of at most ${MAX_DATA_STRING} characters`, `${path}/${i}`);
      });
      return;
    case 'object':
      if (!value || typeof value !== 'object' || Array.isArray(value)) {
        bad('must be an object');
        return;
      }
      checkFields(type.fields, value as Record<string, unknown>, `${path}/`, out);
      return;
  }
}

function checkFields(
  fields: Readonly<Record<string, DataField>>,
  data: Record<string, unknown>,
  prefix: string,
  out: DataIssue[],
): void {
  for (const [name, field] of Object.entries(fields)) {
    const value = data[name];
    if (value === undefined) {
      if (field.required) out.push({ path: `${prefix}${name}`, message: 'is required' });
      continue;
    }
    checkValue(field.type, value, `${prefix}${name}`, out);
  }
}

/**
 * Checks `data` of a catalogue event against its field table ({@link dataFieldsOf}): every required field present,
 * every known field of its type (amounts non-negative integers in whole USD, dates `YYYY-MM-DD`, counts integers,
 * `investors` an array of strings, ...). Used on ingest; the simulator's {@link sampleData} passes it.
 * @returns every problem found, in table order (empty when `data` is valid). Never throws.
 */
export function checkEventData(eventName: string, data: Record<string, unknown>): DataIssue[] {
  const out: DataIssue[] = [];
  checkFields(dataFieldsOf(eventName), data, '', out);
  return out;
}

const pick = <T>(list: readonly T[]): T => list[randomInt(list.length)]!;
const CITIES = [
  ['Berlin', 'DE'],
  ['London', 'GB'],
  ['New York', 'US'],
  ['Austin', 'US'],
  ['Tel Aviv', 'IL'],
  ['Singapore', 'SG'],
  ['Toronto', 'CA'],
] as const;
const COMPANIES = [
  'Acme Corp',
  'Globex',
  'Initech',
  'Umbrella Labs',
  'Hooli',
  'Stark Industries',
  'Wayne Tech',
];
const INVESTORS = [
  'Sequoia Capital',
  'Accel',
  'Index Ventures',
  'a16z',
  'Balderton',
  'Lightspeed',
  'Y Combinator',
];
const TITLES = ['Head of Sales', 'VP Engineering', 'CTO', 'Marketing Manager', 'Account Executive', 'CFO'];
const STAGES = ['pre_seed', 'seed', 'series_a', 'series_b', 'series_c', 'series_d'];

/**
 * A realistic `data` object for `eventName`, dated `eventTime` (used by the simulator and connectivity checks).
 * Amounts are whole US dollars.
 */
export function sampleData(eventName: string, eventTime: Date): Record<string, unknown> {
  const day = eventTime.toISOString().slice(0, 10);
  const sizeMatch = /^(increase|decrease)_in_(.*)_department$/.exec(eventName);
  if (sizeMatch) {
    const before = 20 + randomInt(480);
    const delta = Math.max(1, Math.round(before * (0.05 + randomInt(30) / 100)));
    const after = sizeMatch[1] === 'increase' ? before + delta : before - delta;
    return {
      department: sizeMatch[2],
      headcount_before: before,
      headcount_after: after,
      change_percentage: Math.round(((after - before) / before) * 1000) / 10,
    };
  }
  const hiring = /^hiring_in_(.*)_department$/.exec(eventName);
  if (hiring) return { department: hiring[1], open_positions: 1 + randomInt(40), source: 'job_postings' };
  switch (eventName) {
    case 'new_funding_round':
      return {
        funding_stage: pick(STAGES),
        funding_date: day,
        amount: (1 + randomInt(200)) * 500_000,
        currency: 'USD',
        investors: [pick(INVESTORS), pick(INVESTORS)].filter((v, i, a) => a.indexOf(v) === i),
      };
    case 'ipo_announcement':
      return { exchange: pick(['NASDAQ', 'NYSE', 'LSE']), ticker: `X${randomInt(1000)}`, ipo_date: day };
    case 'new_investment':
      return { investee_name: pick(COMPANIES), amount: (1 + randomInt(50)) * 100_000, currency: 'USD' };
    case 'new_product':
      return { product_name: `Product ${randomInt(1000)}`, description: 'A new product line was announced.' };
    case 'new_office':
    case 'closing_office': {
      const [city, country] = pick(CITIES);
      return { location: { city, country_code: country } };
    }
    case 'new_partnership':
      return { partner_name: pick(COMPANIES), announced_at: day };
    case 'employee_joined_company':
      return { employee_title: pick(TITLES), start_date: day };
    case 'company_award':
      return { award_name: 'Best Place to Work', awarded_by: 'Industry Awards', award_date: day };
    case 'outages_and_security_breaches':
      return { severity: pick(['low', 'medium', 'high']), summary: 'Service disruption reported.' };
    case 'cost_cutting':
      return { summary: 'Cost reduction programme announced.', layoffs: randomInt(200) };
    case 'merger_and_acquisitions':
      return { counterparty_name: pick(COMPANIES), role: pick(['acquirer', 'target']), announced_at: day };
    case 'lawsuits_and_legal_issues':
      return { summary: 'Lawsuit filed.', counterparty_name: pick(COMPANIES) };
    case 'prospect_changed_role':
      return { previous_title: pick(TITLES), new_title: pick(TITLES), company_name: pick(COMPANIES) };
    case 'prospect_changed_company':
      return { previous_company: pick(COMPANIES), new_company: pick(COMPANIES), new_title: pick(TITLES) };
    case 'prospect_job_start_anniversary':
      return { company_name: pick(COMPANIES), years: 1 + randomInt(15), start_date: day };
    default:
      return {};
  }
}

/**
 * The earlier (v1) form of `data`: the funding round used the misspelled `founding_stage` / `founding_date`
 * (NOTES.md). Other types are unchanged.
 */
export function toV1Data(eventName: string, data: Record<string, unknown>): Record<string, unknown> {
  if (eventName !== 'new_funding_round') return data;
  const { funding_stage, funding_date, ...rest } = data;
  return { ...rest, founding_stage: funding_stage, founding_date: funding_date };
}
