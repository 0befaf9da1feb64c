/**
 * The activation sandbox: its one policy table (enforced by the route guard, published by the well-known document and
 * `/auth.md`) and the registration, exchange, binding, claim and cleanup of sandboxes. Other folders import it only
 * through this file.
 */
export { activationContract, activationGuide } from './contract.ts';
export { CLASS_DECISIONS, decide, SANDBOX_RULES, SANDBOX_STATES } from './policy.ts';
export { ActivationSandbox, anonymousCleanupTask } from './sandbox.ts';
