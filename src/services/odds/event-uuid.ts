import { v5 as uuidV5 } from 'uuid';

/**
 * The name-space of derived `event_uuid`s (a random UUID fixed once for this service). Changing it changes every
 * derived `event_uuid`: never change it.
 */
export const EVENT_UUID_NAMESPACE = '1a4f43e0-0a65-4152-bcc4-c059e5ae22a6';

/**
 * The compatibility `event_uuid` of an event whose source gave none (spec F: `event_id` is canonical, `event_uuid`
 * compatibility only): the name-based UUID, version 5 (RFC 9562 section 5.5, the `uuid` package), of its `event_id` in {@link EVENT_UUID_NAMESPACE}, so the same event has the same
 * `event_uuid` on every instance and after every restart, and it differs from `event_id`.
 */
export function derivedEventUuid(eventId: string): string {
  return uuidV5(eventId, EVENT_UUID_NAMESPACE);
}
