/**
 * The activation sandbox: its one policy table (enforced by the route guard, published by the well-known document and
 * `/auth.md`) and the registration, exchange, binding, claim and cleanup of sandboxes. Other folders import it only
 * through this file.
 */
export { activationContract, activationGuide } from './contract.ts';
export {
  CLASS_DECISIONS,
  classify,
  decide,
  FALLBACK_CLASSES,
  grantsOf,
  type RouteClass,
  type RouteRule,
  SANDBOX_RULES,
  SANDBOX_STATES,
  type SandboxState,
} from './policy.ts';
export {
  ABANDONED_AFTER_DAYS,
  type ActivationRecord,
  ActivationSandbox,
  ALLOWANCE_DAYS,
  anonymousCleanupTask,
} from './sandbox.ts';
