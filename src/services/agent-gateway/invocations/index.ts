/** Invocations: the service, its event log and streams, its jobs, and part 2's wiring. */
export type { InvocationEventRow } from './invocation-events.ts';
export { checkCursor, followInvocationEvents, type StreamTarget } from './invocation-stream.ts';
export type { InvocationService } from './invocations.ts';
export { type Part2, readInvocationConfig, setupEndpointsAndInvocations } from './setup.ts';
