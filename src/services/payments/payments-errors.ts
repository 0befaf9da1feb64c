/**
 * Errors of the payments service in the JSON:API body of NOTES.md (anchor: an agent-payments API):
 * `{"errors":[{"status":"400","code":"invalid_value","title","detail","source":{"pointer"},"meta":{"supportId"}}]}`.
 * `supportId` is the request id (also in `x-request-id`). Validation failures list every failing field.
 */
import type { ApiError, FieldIssue } from '../../platform/errors.ts';

const TITLES: Record<number, string> = {
  400: 'Bad Request',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'Not Found',
  409: 'Conflict',
  413: 'Payload Too Large',
  415: 'Unsupported Media Type',
  422: 'Unprocessable Entity',
  429: 'Too Many Requests',
  500: 'Internal Server Error',
  503: 'Service Unavailable',
};

/** Platform codes renamed to the anchor's codes. */
const CODES: Record<string, string> = {
  validation_failed: 'invalid_value',
  bad_request: 'invalid_value',
  invalid_pagination: 'invalid_value',
  not_found: 'not_found',
  operator_unauthenticated: 'unauthenticated',
  internal: 'internal_error',
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
  const code = CODES[error.code] ?? error.code;
  const title = TITLES[error.status] ?? 'Error';
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
