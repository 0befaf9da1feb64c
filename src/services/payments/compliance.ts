/**
 * Compliance of parties (spec 001 section A: `partyComplianceStatus`, `complianceSessionStatus`, the ten case
 * statuses). The spec gives the shapes; the mapping from a case to what the user sees, and the case transitions,
 * are ours (README "Compliance"). Pure functions: no database, no HTTP.
 */
import { ApiError } from '../../platform/errors.ts';
import type { RequirementRow } from './db/schema.ts';

export const CASE_STATUSES = [
  'UNSPECIFIED',
  'NOT_READY',
  'READY',
  'PENDING',
  'MET',
  'DENIED',
  'ACTION_NEEDED',
  'DEPRECATED',
  'USER_ACTION',
  'ADMIN_REVIEW',
] as const;
export type CaseStatus = (typeof CASE_STATUSES)[number];

export const DISPLAY_STATES = [
  'verified',
  'underReview',
  'inProgress',
  'documentsRequired',
  'rejected',
] as const;
export type DisplayState = (typeof DISPLAY_STATES)[number];

/** What the user sees for a case status. `requirementsDue` says which requirements are listed as due. */
export interface DisplayRule {
  displayState: DisplayState;
  canProceed: boolean;
  title: string;
  message: string;
  /** `all`: every open requirement of the case is due (user action or review); `none`: nothing is due. */
  requirementsDue: 'all' | 'none';
}

/** The table of README "Compliance": case status -> displayState, canProceed, title, message, requirementsDue. */
export const DISPLAY_RULES: Readonly<Record<CaseStatus, DisplayRule>> = {
  MET: {
    displayState: 'verified',
    canProceed: true,
    title: 'Verified',
    message: 'Verification is complete. You can take payments.',
    requirementsDue: 'none',
  },
  PENDING: {
    displayState: 'underReview',
    canProceed: false,
    title: 'Under review',
    message: 'Your information was submitted and is being reviewed. This usually takes one business day.',
    requirementsDue: 'all',
  },
  ADMIN_REVIEW: {
    displayState: 'underReview',
    canProceed: false,
    title: 'Under review',
    message: 'A compliance specialist is reviewing your case. No action is needed from you right now.',
    requirementsDue: 'all',
  },
  UNSPECIFIED: {
    displayState: 'inProgress',
    canProceed: false,
    title: 'Verification not started',
    message: 'Start verification to take payments.',
    requirementsDue: 'all',
  },
  NOT_READY: {
    displayState: 'inProgress',
    canProceed: false,
    title: 'Verification in progress',
    message: 'Finish the verification steps listed to take payments.',
    requirementsDue: 'all',
  },
  READY: {
    displayState: 'inProgress',
    canProceed: false,
    title: 'Ready to submit',
    message: 'Everything needed has been provided. Submit your verification for review.',
    requirementsDue: 'none',
  },
  DEPRECATED: {
    displayState: 'inProgress',
    canProceed: false,
    title: 'Verification needs updating',
    message: 'The verification program was updated. Complete the new version to keep taking payments.',
    requirementsDue: 'all',
  },
  ACTION_NEEDED: {
    displayState: 'documentsRequired',
    canProceed: false,
    title: 'Documents required',
    message: 'We need more documents to finish verification. Provide the items listed.',
    requirementsDue: 'all',
  },
  USER_ACTION: {
    displayState: 'documentsRequired',
    canProceed: false,
    title: 'Action required',
    message: 'Some information needs your attention. Complete the items listed.',
    requirementsDue: 'all',
  },
  DENIED: {
    displayState: 'rejected',
    canProceed: false,
    title: 'Verification declined',
    message: 'We could not verify this party. Payments cannot be taken. Contact support to appeal.',
    requirementsDue: 'none',
  },
};

/**
 * Allowed case transitions (operator routes move a case; README "Compliance" has the same table).
 * A case starts at `NOT_READY` (or another status given by the operator when seeding a party).
 */
export const CASE_TRANSITIONS: Readonly<Record<CaseStatus, readonly CaseStatus[]>> = {
  UNSPECIFIED: ['NOT_READY', 'READY'],
  NOT_READY: ['READY'],
  READY: ['PENDING', 'NOT_READY'],
  PENDING: ['MET', 'DENIED', 'ACTION_NEEDED', 'USER_ACTION', 'ADMIN_REVIEW'],
  USER_ACTION: ['PENDING'],
  ACTION_NEEDED: ['PENDING'],
  ADMIN_REVIEW: ['MET', 'DENIED', 'ACTION_NEEDED'],
  MET: ['DEPRECATED', 'ACTION_NEEDED'],
  DENIED: ['ADMIN_REVIEW'],
  DEPRECATED: ['NOT_READY'],
};

/**
 * Checks a case transition.
 * @throws ApiError 409 `invalid_state` when `to` is not reachable from `from` in one step.
 */
export function assertCaseTransition(from: CaseStatus, to: CaseStatus): void {
  if (!CASE_TRANSITIONS[from].includes(to)) {
    throw new ApiError(
      409,
      'invalid_state',
      `A compliance case in ${from} cannot move to ${to} (allowed: ${CASE_TRANSITIONS[from].join(', ') || 'none'}).`,
      { details: { pointer: '/caseStatus' } }, // the operator body is flat: {caseStatus, requirements?}
    );
  }
}

/**
 * The case transition table as a Markdown table (`| from | allowed to |`, one row per status, in table order), for
 * the description of `caseStatus` / `status` in `/openapi.json`.
 */
export function describeCaseTransitions(): string {
  const rows = (Object.entries(CASE_TRANSITIONS) as [CaseStatus, readonly CaseStatus[]][]).map(
    ([from, to]) => `| ${from} | ${to.join(', ')} |`,
  );
  return [
    'Compliance case status. Operators move a case (POST /_ops/parties/{partyId}/compliance/case); any move ' +
      'outside this table answers 409 invalid_state. Only MET can proceed (take part in payments).',
    '',
    '| from | allowed to |',
    '| --- | --- |',
    ...rows,
  ].join('\n');
}

/** The attributes of `partyComplianceStatus` for a case. */
export function partyComplianceAttributes(input: {
  programCode: string;
  caseStatus: CaseStatus;
  requirements: readonly RequirementRow[];
}) {
  const rule = DISPLAY_RULES[input.caseStatus];
  return {
    programCode: input.programCode,
    caseStatus: input.caseStatus,
    displayState: rule.displayState,
    title: rule.title,
    message: rule.message,
    canProceed: rule.canProceed,
    requirementsDue: rule.requirementsDue === 'all' ? input.requirements.map((r) => r.key) : [],
  };
}

/** True when a party in `caseStatus` may take part in payments. */
export function canProceed(caseStatus: string): boolean {
  return DISPLAY_RULES[caseStatus as CaseStatus]?.canProceed === true;
}
