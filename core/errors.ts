/**
 * Errors are values with a code. Handlers throw ApiError; exactly one place
 * maps it to the native envelope (core/http/native-envelope.ts) and one to the
 * compatible envelope (core/http/compat-envelope.ts). Nothing else builds an
 * error body.
 */
export interface ApiErrorFields {
  code?: string;
  retryAfterSeconds?: number;
  resetAt?: string;
  remaining?: number;
  required?: number;
  /** Offending field, used by the compatible envelope's `param`. */
  param?: string | null;
  /** Extra documented fields (e.g. `cloneUrl`, `fallback`, `chapterCharsMax`). */
  extra?: Record<string, unknown>;
  /** Extra response headers (e.g. rate-limit headers). */
  headers?: Record<string, string>;
  /** Compatible-route `type` override (e.g. a pre-handler 403 is authentication_error). */
  compatType?: string;
  /** Error code for usage analytics when it differs from `http_<status>`. */
  usageCode?: string;
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
  409: 'Conflict',
  410: 'Gone',
  413: 'Payload Too Large',
  415: 'Unsupported Media Type',
  422: 'Unprocessable Entity',
  429: 'Too Many Requests',
  500: 'Internal Server Error',
  502: 'Bad Gateway',
  503: 'Service Unavailable',
};

/** Small constructors for the refusals used across plugins. */
export const errors = {
  badRequest: (message: string | string[], fields?: ApiErrorFields) => new ApiError(400, message, fields),
  unauthorized: (message = 'Missing, malformed or revoked API key') => new ApiError(401, message),
  forbidden: (message: string, fields?: ApiErrorFields) => new ApiError(403, message, fields),
  notFound: (message = 'Not found') => new ApiError(404, message),
  conflict: (message: string, fields?: ApiErrorFields) => new ApiError(409, message, fields),
  unprocessable: (message: string, fields?: ApiErrorFields) => new ApiError(422, message, fields),
  tooMany: (message: string, fields?: ApiErrorFields) => new ApiError(429, message, fields),
  unavailable: (message: string, fields?: ApiErrorFields) => new ApiError(503, message, fields),
  internal: (message = 'Internal error') => new ApiError(500, message),
};

export const RETIRED_ENGINE_MESSAGE =
  'Engine v3 was retired on 2026-09-24. Use engine v4 with a voice from GET /voices?engine=v4 (the catalogues share no ids).';

export function isApiError(err: unknown): err is ApiError {
  return err instanceof ApiError;
}
