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

/**
 * Fields that `data` must carry for `eventName` (checked on operator ingest). Department events name their
 * department; the funding round has `funding_stage`, `funding_date`, `amount` and `investors`.
 */
export function requiredDataFields(eventName: string): string[] {
  if (eventName === 'new_funding_round') return ['funding_stage', 'funding_date', 'amount', 'investors'];
  if (eventName === 'ipo_announcement') return ['exchange', 'ticker'];
  if (/^(increase|decrease)_in_.*_department$/.test(eventName))
    return ['department', 'headcount_before', 'headcount_after'];
  if (/^hiring_in_.*_department$/.test(eventName)) return ['department', 'open_positions'];
  if (eventName === 'prospect_changed_role') return ['previous_title', 'new_title'];
  if (eventName === 'prospect_changed_company') return ['previous_company', 'new_company'];
  if (eventName === 'prospect_job_start_anniversary') return ['company_name', 'years'];
  return [];
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
