import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, test } from 'node:test';
import type { ApiError } from '../../../platform/errors.ts';
import {
  assertCaseTransition,
  CASE_STATUSES,
  CASE_TRANSITIONS,
  DISPLAY_RULES,
  describeCaseTransitions,
  partyComplianceAttributes,
} from '../compliance.ts';
import {
  describeTransitions,
  isTerminal,
  MACHINES,
  type MachineName,
  nextState,
  transition,
} from '../state-machines.ts';

describe('state machines: the tables are the only transitions', () => {
  for (const name of Object.keys(MACHINES) as MachineName[]) {
    const machine = MACHINES[name];
    const events = [...new Set(machine.edges.map((e) => e.event))];
    test(`${name}: every (state, event) pair is either its table edge or a 409`, () => {
      for (const from of machine.states) {
        for (const event of events) {
          const edge = machine.edges.find((e) => e.from === from && e.event === event);
          if (edge) {
            assert.equal(transition(name, from, event), edge.to, `${from} --${event}-->`);
          } else {
            assert.throws(
              () => transition(name, from, event),
              (e: ApiError) => e.status === 409 && e.code === 'invalid_state' && e.message.includes(from),
              `${from} --${event}--> must be refused`,
            );
          }
        }
      }
    });
  }

  test('terminal states', () => {
    assert.deepEqual(
      MACHINES.paymentIntent.states.filter((s) => isTerminal('paymentIntent', s)),
      ['completed', 'canceled', 'declined', 'expired'],
    );
    assert.deepEqual(
      MACHINES.cardPayment.states.filter((s) => isTerminal('cardPayment', s)),
      ['succeeded', 'failed'],
    );
    assert.deepEqual(
      MACHINES.voiceSession.states.filter((s) => isTerminal('voiceSession', s)),
      ['completed', 'ended'],
    );
    assert.equal(nextState('paymentIntent', 'processing', 'cancel'), undefined);
  });

  test('voice session: a processing keyed card keeps the session active; approval completes it', () => {
    // README "Voice session": the session waits while its card is processing (the settle job may still decline it).
    assert.equal(transition('voiceSession', 'active', 'paymentProcessing'), 'active');
    assert.equal(transition('voiceSession', 'active', 'paymentSucceeded'), 'completed');
    assert.equal(transition('voiceSession', 'active', 'paymentFailed'), 'active');
    assert.equal(transition('voiceSession', 'active', 'end'), 'ended');
    assert.deepEqual(
      MACHINES.voiceSession.edges.map((e) => `${e.from} ${e.event} ${e.to}`),
      [
        'active paymentProcessing active',
        'active paymentSucceeded completed',
        'active paymentFailed active',
        'active end ended',
      ],
    );
  });

  test('the README tables of the three machines and of the case transitions are the code tables', () => {
    const readme = readFileSync(path.join(import.meta.dirname, '..', 'README.md'), 'utf8');
    /** The body rows (cells) of the first table after `heading`. */
    const tableAfter = (heading: string): string[][] => {
      const lines = readme.slice(readme.indexOf(heading)).split('\n');
      const start = lines.findIndex((l) => l.startsWith('| ---'));
      const body: string[][] = [];
      for (const line of lines.slice(start + 1)) {
        if (!line.startsWith('|')) break;
        body.push(
          line
            .slice(1, -1)
            .split(' | ')
            .map((c) => c.trim()),
        );
      }
      return body;
    };
    const headings: Record<MachineName, string> = {
      paymentIntent: '### Payment intent',
      cardPayment: '### Card payment',
      voiceSession: '### Voice session',
    };
    for (const name of Object.keys(MACHINES) as MachineName[]) {
      assert.deepEqual(
        tableAfter(headings[name]).map((cells) => cells.slice(0, 3)),
        MACHINES[name].edges.map((e) => [e.from, e.event, e.to]),
        name,
      );
    }
    assert.deepEqual(
      tableAfter('Case transitions (operator route'),
      Object.entries(CASE_TRANSITIONS).map(([from, to]) => [from, to.join(', ')]),
    );
  });

  test('describeTransitions: one Markdown row per edge, for the OpenAPI status descriptions', () => {
    for (const name of Object.keys(MACHINES) as MachineName[]) {
      const text = describeTransitions(name);
      const rows = text.split('\n').filter((l) => /^\| [a-z]/.test(l) && !l.startsWith('| from'));
      assert.deepEqual(
        rows,
        MACHINES[name].edges.map((e) => `| ${e.from} | ${e.event} | ${e.to} |`),
        name,
      );
    }
    const cases = describeCaseTransitions();
    for (const from of CASE_STATUSES) {
      assert.ok(cases.includes(`| ${from} | ${CASE_TRANSITIONS[from].join(', ')} |`), from);
    }
  });
});

describe('compliance: display table and case transitions', () => {
  test('displayState, canProceed, title and message for each of the ten case statuses', () => {
    // The README "Compliance" table: displayState, canProceed, title, whether open requirements are due, message.
    const expected: Record<string, [string, boolean, string, boolean, string]> = {
      MET: ['verified', true, 'Verified', false, 'Verification is complete. You can take payments.'],
      PENDING: [
        'underReview',
        false,
        'Under review',
        true,
        'Your information was submitted and is being reviewed. This usually takes one business day.',
      ],
      ADMIN_REVIEW: [
        'underReview',
        false,
        'Under review',
        true,
        'A compliance specialist is reviewing your case. No action is needed from you right now.',
      ],
      UNSPECIFIED: [
        'inProgress',
        false,
        'Verification not started',
        true,
        'Start verification to take payments.',
      ],
      NOT_READY: [
        'inProgress',
        false,
        'Verification in progress',
        true,
        'Finish the verification steps listed to take payments.',
      ],
      READY: [
        'inProgress',
        false,
        'Ready to submit',
        false,
        'Everything needed has been provided. Submit your verification for review.',
      ],
      DEPRECATED: [
        'inProgress',
        false,
        'Verification needs updating',
        true,
        'The verification program was updated. Complete the new version to keep taking payments.',
      ],
      ACTION_NEEDED: [
        'documentsRequired',
        false,
        'Documents required',
        true,
        'We need more documents to finish verification. Provide the items listed.',
      ],
      USER_ACTION: [
        'documentsRequired',
        false,
        'Action required',
        true,
        'Some information needs your attention. Complete the items listed.',
      ],
      DENIED: [
        'rejected',
        false,
        'Verification declined',
        false,
        'We could not verify this party. Payments cannot be taken. Contact support to appeal.',
      ],
    };
    assert.deepEqual(Object.keys(expected).sort(), [...CASE_STATUSES].sort());
    const requirements = [{ id: 'req_1', key: 'bank_account', description: 'Bank account' }];
    for (const status of CASE_STATUSES) {
      const a = partyComplianceAttributes({ programCode: 'P', caseStatus: status, requirements });
      assert.equal(a.displayState, expected[status]![0], status);
      assert.equal(a.canProceed, expected[status]![1], status);
      assert.equal(a.title, expected[status]![2], status);
      assert.equal(a.message, expected[status]![4], status);
      assert.equal(a.caseStatus, status);
      assert.equal(a.programCode, 'P');
      assert.deepEqual(a.requirementsDue, expected[status]![3] ? ['bank_account'] : [], status);
      assert.equal(DISPLAY_RULES[status].requirementsDue, expected[status]![3] ? 'all' : 'none');
    }
    assert.deepEqual(
      partyComplianceAttributes({ programCode: 'P', caseStatus: 'MET', requirements }).requirementsDue,
      [],
    );
    assert.deepEqual(
      partyComplianceAttributes({ programCode: 'P', caseStatus: 'USER_ACTION', requirements })
        .requirementsDue,
      ['bank_account'],
    );
  });

  test('the README compliance table is DISPLAY_RULES, message included', () => {
    const readme = readFileSync(path.join(import.meta.dirname, '..', 'README.md'), 'utf8');
    const rows = new Map<string, string[]>();
    for (const line of readme.split('\n')) {
      const m = /^\| `([A-Z_]+)` \| (.+) \|$/.exec(line);
      if (m && (CASE_STATUSES as readonly string[]).includes(m[1]!)) rows.set(m[1]!, m[2]!.split(' | '));
    }
    assert.deepEqual([...rows.keys()].sort(), [...CASE_STATUSES].sort());
    for (const status of CASE_STATUSES) {
      const rule = DISPLAY_RULES[status];
      const [displayState, canProceed, title, due, message] = rows.get(status)!;
      assert.deepEqual(
        [displayState, canProceed, title, due?.startsWith('none'), message],
        [
          rule.displayState,
          String(rule.canProceed),
          rule.title,
          rule.requirementsDue === 'none',
          rule.message,
        ],
        status,
      );
    }
  });

  test('every pair of case statuses: allowed exactly when in the table', () => {
    for (const from of CASE_STATUSES) {
      for (const to of CASE_STATUSES) {
        if (CASE_TRANSITIONS[from].includes(to)) assert.doesNotThrow(() => assertCaseTransition(from, to));
        else
          assert.throws(
            () => assertCaseTransition(from, to),
            (e: ApiError) => e.status === 409 && e.code === 'invalid_state',
          );
      }
    }
  });
});
