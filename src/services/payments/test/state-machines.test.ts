import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { ApiError } from '../../../platform/errors.ts';
import {
  assertCaseTransition,
  CASE_STATUSES,
  CASE_TRANSITIONS,
  DISPLAY_RULES,
  partyComplianceAttributes,
} from '../compliance.ts';
import { isTerminal, MACHINES, type MachineName, nextState, transition } from '../state-machines.ts';

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
});

describe('compliance: display table and case transitions', () => {
  test('displayState, canProceed, title and message for each of the ten case statuses', () => {
    // The README "Compliance" table: displayState, canProceed, title, whether open requirements are due.
    const expected: Record<string, [string, boolean, string, boolean]> = {
      MET: ['verified', true, 'Verified', false],
      PENDING: ['underReview', false, 'Under review', true],
      ADMIN_REVIEW: ['underReview', false, 'Under review', true],
      UNSPECIFIED: ['inProgress', false, 'Verification not started', true],
      NOT_READY: ['inProgress', false, 'Verification in progress', true],
      READY: ['inProgress', false, 'Ready to submit', false],
      DEPRECATED: ['inProgress', false, 'Verification needs updating', true],
      ACTION_NEEDED: ['documentsRequired', false, 'Documents required', true],
      USER_ACTION: ['documentsRequired', false, 'Action required', true],
      DENIED: ['rejected', false, 'Verification declined', false],
    };
    assert.deepEqual(Object.keys(expected).sort(), [...CASE_STATUSES].sort());
    const requirements = [{ id: 'req_1', key: 'bank_account', description: 'Bank account' }];
    for (const status of CASE_STATUSES) {
      const a = partyComplianceAttributes({ programCode: 'P', caseStatus: status, requirements });
      assert.equal(a.displayState, expected[status]![0], status);
      assert.equal(a.canProceed, expected[status]![1], status);
      assert.equal(a.title, expected[status]![2], status);
      assert.ok(a.message.length > 0);
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
