/**
 * Errors are values with a code. Domain code (billing, the catalogue, text
 * preparation, plugin services) throws a DomainError naming what kind of
 * refusal it is, without knowing HTTP; route handlers and core's HTTP layer
 * may throw an ApiError with a status. One place turns either into the
 * native envelope and one into the compatible envelope
 * (core/http/envelopes.ts). Nothing else builds an error body.
 */

/** What went wrong, as the domain sees it; the HTTP layer picks the status. */
export type ErrorKind =
  | 'invalid' // the request is wrong (400)
  | 'unauthenticated' // no valid credentials (401)
  | 'payment_required' // a priced plan cannot start (402, audiobooks only)
  | 'forbidden' // out of tokens, expired, not in the plan (403)
  | 'not_found' // (404)
  | 'conflict' // (409)
  | 'gone' // (410)
  | 'too_large' // (413)
  | 'unsupported_media' // (415)
  | 'unprocessable' // moderation, idempotency key reuse (422)
  | 'limited' // a rate, cap, queue or concurrency limit (429)
  | 'failed' // the work failed (500)
  | 'upstream_failed' // every worker failed (502)
  | 'unavailable'; // no capacity or no worker right now (503)

export interface ErrorDetails {
  code?: string;
  retryAfterSeconds?: number;
  resetAt?: string;
  remaining?: number;
  required?: number;
  /** Offending field, used by the compatible envelope's `param`. */
  param?: string | null;
  /** Extra documented fields (e.g. `cloneUrl`, `fallback`, `chapterCharsMax`). */
  extra?: Record<string, unknown>;
  /** Error code for usage analytics when it differs from `http_<status>`. */
  usageCode?: string;
}

export class DomainError extends Error {
  readonly kind: ErrorKind;
  readonly messages: string | string[];
  readonly details: ErrorDetails;

  constructor(kind: ErrorKind, message: string | string[], details: ErrorDetails = {}) {
    super(Array.isArray(message) ? message.join('; ') : message);
    this.name = 'DomainError';
    this.kind = kind;
    this.messages = message;
    this.details = details;
  }

  get code(): string | undefined {
    return this.details.code;
  }
}

/** The HTTP layer's own additions to an error. */
export interface ApiErrorFields extends ErrorDetails {
  /** Extra response headers (e.g. rate-limit headers, Allow). */
  headers?: Record<string, string>;
  /** Compatible-route `type` override (e.g. a pre-handler 403 is authentication_error). */
  compatType?: string;
  /**
   * Native body with only `statusCode` and `message`: the voice-agent
   * webhook's 502 (SPEC POST /agent/speech), whose caller reads nothing else.
   */
  bare?: boolean;
}

export class ApiError extends Error {
  readonly status: number;
  readonly messages: string | string[];
  readonly fields: ApiErrorFields;

  constructor(status: number, message: string | string[], fields: ApiErrorFields = {}) {
    super(Array.isArray(message) ? message.join('; ') : message);
    this.name = 'ApiError';
    this.status = status;
    this.messages = message;
    this.fields = fields;
  }

  get code(): string | undefined {
    return this.fields.code;
  }
}

export const STATUS_NAMES: Record<number, string> = {
  400: 'Bad Request',
  401: 'Unauthorized',
  402: 'Payment Required',
  403: 'Forbidden',
  404: 'Not Found',
  405: 'Method Not Allowed',
  408: 'Request Timeout',
  409: 'Conflict',
  410: 'Gone',
  413: 'Payload Too Large',
  415: 'Unsupported Media Type',
  416: 'Range Not Satisfiable',
  422: 'Unprocessable Entity',
  429: 'Too Many Requests',
  431: 'Request Header Fields Too Large',
  499: 'Client Closed Request',
  500: 'Internal Server Error',
  502: 'Bad Gateway',
  503: 'Service Unavailable',
};

export const RETIRED_ENGINE_MESSAGE =
  'Engine v3 was retired on 2026-09-24. Use engine v4 with a voice from GET /voices?engine=v4 (the catalogues share no ids).';

/** True for refusals (anything the caller can fix or wait out), false for failures of the service. */
export function isRefusal(err: unknown): boolean {
  if (err instanceof ApiError) return err.status < 500;
  if (err instanceof DomainError) return !['failed', 'upstream_failed', 'unavailable'].includes(err.kind);
  return false;
}
