/**
 * Organizations, memberships, terms, alpha features, settings and the audit log. Other folders use this module
 * through this file only.
 */
export { type Actor, ALPHA_FEATURES, OPERATOR, Organizations } from './organizations.ts';
