import { randomInt } from 'node:crypto';
import { type TObject, type TProperties, Type } from '@sinclair/typebox';
// The platform gives TypeBox's `date` format (used by the data schemas below) its meaning: an existing calendar date.
import '../../platform/schemas.ts';
import { Value, ValueErrorType } from '@sinclair/typebox/value';

/**
 * The event-type catalogue (spec 002 section G; names from the anchor) and the `data` shape of each type.
 * Entity types are `business` and `prospect`; each has its own list of event names.
 */
export type EntityType = 'business' | 'prospect';

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

// Every field schema carries a `description`: it documents the field and makes the issue message ("must be ...").
const MAX_DATA_STRING = 2000;
const text = Type.String({
  minLength: 1,
  maxLength: MAX_DATA_STRING,
  pattern: '\\S',
  description: `a non-empty string of at most ${MAX_DATA_STRING.toLocaleString('en-US')} characters`,
});
const date = Type.String({ format: 'date', description: 'a calendar date YYYY-MM-DD' });
const integer = (minimum: number, description: string) =>
  Type.Integer({ minimum, maximum: Number.MAX_SAFE_INTEGER, description });
const count = integer(0, 'a non-negative integer');
const usd = integer(0, 'a non-negative integer (whole US dollars)');
/** One of `values` (a union of literals); `hint` is added to the message. */
const oneOf = (values: readonly string[], hint?: string) =>
  Type.Union(
    values.map((v) => Type.Literal(v)),
    { description: `${values.map((v) => JSON.stringify(v)).join(' or ')}${hint ? ` (${hint})` : ''}` },
  );
const currency = oneOf(['USD'], 'amounts are whole US dollars');
const location = Type.Object(
  {
    city: Type.Optional(text),
    country_code: Type.Optional(
      Type.String({ pattern: '^[A-Z]{2}$', description: 'an ISO 3166-1 alpha-2 code' }),
    ),
  },
  { description: 'an object' },
);
/** The `data` schema: fields outside `properties` are allowed (the feed may add some) and kept unchecked. */
const data = (properties: TProperties): TObject => Type.Object(properties, { additionalProperties: true });

/**
 * The `data` schema of every catalogue type: what `data` carries, its types, and which fields are required.
 * Optional fields may be omitted but, when present, must have their type (`null` is not a value of any type).
 */
function buildDataSchema(eventName: string): TObject {
  const size = /^(increase|decrease)_in_(.*)_department$/.exec(eventName);
  if (size)
    return data({
      department: oneOf([size[2]!], 'the department of the event name'),
      headcount_before: count,
      headcount_after: count,
      change_percentage: Type.Optional(Type.Number({ description: 'a number' })),
    });
  const hiring = /^hiring_in_(.*)_department$/.exec(eventName);
  if (hiring)
    return data({
      department: oneOf([hiring[1]!], 'the department of the event name'),
      open_positions: count,
      source: Type.Optional(text),
    });
  switch (eventName) {
    case 'new_funding_round':
      return data({
        funding_stage: text,
        funding_date: date,
        amount: usd,
        investors: Type.Array(text, { description: 'an array of non-empty strings' }),
        currency: Type.Optional(currency),
      });
    case 'ipo_announcement':
      return data({ exchange: text, ticker: text, ipo_date: Type.Optional(date) });
    case 'new_investment':
      return data({
        investee_name: Type.Optional(text),
        amount: Type.Optional(usd),
        currency: Type.Optional(currency),
      });
    case 'new_product':
      return data({ product_name: Type.Optional(text), description: Type.Optional(text) });
    case 'new_office':
    case 'closing_office':
      return data({ location: Type.Optional(location) });
    case 'new_partnership':
      return data({ partner_name: Type.Optional(text), announced_at: Type.Optional(date) });
    case 'employee_joined_company':
      return data({ employee_title: Type.Optional(text), start_date: Type.Optional(date) });
    case 'company_award':
      return data({
        award_name: Type.Optional(text),
        awarded_by: Type.Optional(text),
        award_date: Type.Optional(date),
      });
    case 'outages_and_security_breaches':
      return data({
        severity: Type.Optional(oneOf(['low', 'medium', 'high'])),
        summary: Type.Optional(text),
      });
    case 'cost_cutting':
      return data({ summary: Type.Optional(text), layoffs: Type.Optional(count) });
    case 'merger_and_acquisitions':
      return data({
        counterparty_name: Type.Optional(text),
        role: Type.Optional(oneOf(['acquirer', 'target'])),
        announced_at: Type.Optional(date),
      });
    case 'lawsuits_and_legal_issues':
      return data({ summary: Type.Optional(text), counterparty_name: Type.Optional(text) });
    case 'prospect_changed_role':
      return data({ previous_title: text, new_title: text, company_name: Type.Optional(text) });
    case 'prospect_changed_company':
      return data({ previous_company: text, new_company: text, new_title: Type.Optional(text) });
    case 'prospect_job_start_anniversary':
      return data({
        company_name: text,
        years: integer(1, 'an integer of at least 1 (years)'),
        start_date: Type.Optional(date),
      });
    default:
      return data({});
  }
}

const DATA_SCHEMAS: ReadonlyMap<string, TObject> = new Map(
  [...BUSINESS_EVENT_TYPES, ...PROSPECT_EVENT_TYPES].map((name) => [name, buildDataSchema(name)]),
);
const NO_FIELDS = data({});

/**
 * The TypeBox schema of `data` for a catalogue event type (an object with no known fields for a name outside the
 * catalogue). `required` lists the fields `data` must carry: department events name their department; the funding
 * round has `funding_stage`, `funding_date`, `amount` and `investors`. Other properties are allowed and unchecked.
 */
export function dataSchemaOf(eventName: string): TObject {
  return DATA_SCHEMAS.get(eventName) ?? NO_FIELDS;
}

/** One problem of a `data` object: `path` is a pointer below `data` (`amount`, `investors/1`, `location/city`). */
export interface DataIssue {
  path: string;
  message: string;
}

/**
 * Checks `data` of a catalogue event against its schema ({@link dataSchemaOf}) with TypeBox: every required field
 * present, every known field of its type (amounts non-negative integers in whole USD, dates `YYYY-MM-DD` that exist,
 * counts integers, `investors` an array of non-empty strings, `location` an object, ...). Used on ingest (spec 002
 * section G, the data feed); the simulator's {@link sampleData} passes it.
 * @returns every problem found, one per pointer (TypeBox may report several errors for one value; the first is
 *   kept, a missing field says `is required`, the others `must be <the field's description>`), in the schema's field
 *   order (empty when `data` is valid). Never throws.
 */
export function checkEventData(eventName: string, value: Record<string, unknown>): DataIssue[] {
  const schema = dataSchemaOf(eventName);
  if (Value.Check(schema, value)) return [];
  const byPath = new Map<string, DataIssue>();
  for (const error of Value.Errors(schema, value)) {
    const path = error.path.slice(1); // a JSON pointer (`/investors/1`) made relative to `data`
    const missing = error.type === ValueErrorType.ObjectRequiredProperty;
    if (byPath.has(path) && !missing) continue;
    const description: unknown = error.schema.description;
    const message = missing
      ? 'is required'
      : typeof description === 'string'
        ? `must be ${description}`
        : error.message;
    byPath.set(path, { path, message });
  }
  const fields = Object.keys(schema.properties);
  const rank = (issue: DataIssue) => {
    const i = fields.indexOf(issue.path.split('/')[0]!);
    return i < 0 ? fields.length : i;
  };
  return [...byPath.values()].sort((a, b) => rank(a) - rank(b));
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
 * (as the anchor's earlier version did). Other types are unchanged.
 */
export function toV1Data(eventName: string, data: Record<string, unknown>): Record<string, unknown> {
  if (eventName !== 'new_funding_round') return data;
  const { funding_stage, funding_date, ...rest } = data;
  return { ...rest, founding_stage: funding_stage, founding_date: funding_date };
}
