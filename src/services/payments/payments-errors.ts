/**
 * Errors of the payments service in its anchor's JSON:API body (an agent-payments API):
 * `{"errors":[{"status":"400","code":"invalid_value","title","detail","source":{"pointer"},"meta":{"supportId"}}]}`.
 * `supportId` is the request id (also in `x-request-id`). Validation failures list every failing field.
 */
import {
  type ApiError,
  type FieldIssue,
  isPlatformErrorCode,
  type PlatformCodeMap,
  reasonPhrase,
} from '../../platform/errors.ts';

/** The anchor's code of each platform error. */
const PLATFORM_CODES: PlatformCodeMap<string> = {
  validation_failed: 'invalid_value',
  bad_request: 'invalid_value',
  invalid_pagination: 'invalid_value',
  operator_unauthenticated: 'unauthenticated',
  not_found: 'not_found',
  idempotency_key_reused: 'idempotency_key_reused',
  idempotency_key_in_use: 'idempotency_key_in_use',
  payload_too_large: 'payload_too_large',
  method_not_allowed: 'method_not_allowed',
  request_timeout: 'request_timeout',
  uri_too_long: 'invalid_value',
  header_fields_too_large: 'invalid_value',
  unsupported_media_type: 'unsupported_media_type',
  rate_limited: 'rate_limited',
  internal: 'internal_error',
  service_unavailable: 'service_unavailable',
};

/** One JSON:API error object. */
export interface JsonApiError {
  status: string;
  code: string;
  title: string;
  detail: string;
  source?: { pointer?: string; parameter?: string; header?: string };
  meta: { supportId: string };
}

function sourceOf(issue: FieldIssue): JsonApiError['source'] {
  if (issue.location === 'body') return { pointer: `/${issue.field}`.replace(/\/$/, '') || '/' };
  if (issue.location === 'headers') return { header: issue.field };
  return { parameter: issue.field.replace(/\//g, '.') };
}

/** Renders an ApiError as the JSON:API error document (every validation issue as its own error object). */
export function formatPaymentsError(error: ApiError, request: { id: unknown }): { body: unknown } {
  const supportId = String(request.id);
  const status = String(error.status);
  const code = isPlatformErrorCode(error.code) ? PLATFORM_CODES[error.code] : error.code;
  const title = reasonPhrase(error.status);
  const issues = error.details?.issues as FieldIssue[] | undefined;
  if (Array.isArray(issues) && issues.length > 0) {
    return {
      body: {
        errors: issues.map((issue) => ({
          status,
          code,
          title,
          detail: `${issue.field ? `${issue.field.replace(/\//g, '.')} ` : ''}${issue.message}`,
          source: sourceOf(issue),
          meta: { supportId },
        })),
      },
    };
  }
  const item: JsonApiError = { status, code, title, detail: error.message, meta: { supportId } };
  const pointer = error.details?.pointer;
  if (typeof pointer === 'string') item.source = { pointer };
  const parameter = error.details?.parameter;
  if (typeof parameter === 'string') item.source = { parameter };
  const header = error.details?.header;
  if (typeof header === 'string') item.source = { header };
  return { body: { errors: [item] } };
}
