import {
  managementErrorStatus,
  oauthErrorStatus,
  type FieldIssue,
  type ManagementErrorCode,
  type OAuthErrorCode,
} from '@tarmac/contract';

/** The one exception type of the management plane; the error handler turns it into `{error, code, message}`. */
export class ApiError extends Error {
  readonly status: number;
  constructor(
    readonly code: ManagementErrorCode,
    message: string,
    options: { status?: number; details?: FieldIssue[]; extra?: Record<string, unknown> } = {},
  ) {
    super(message);
    this.name = 'ApiError';
    this.status = options.status ?? managementErrorStatus[code];
    this.details = options.details;
    this.extra = options.extra;
  }
  readonly details: FieldIssue[] | undefined;
  /** Extra body fields some routes add for compatibility (e.g. the sandbox conflict body). */
  readonly extra: Record<string, unknown> | undefined;
}

export const invalidField = (field: string, message: string) =>
  new ApiError('validation_error', `${field}: ${message}`, { details: [{ field, message }] });
export const notFound = (what: string) => new ApiError('not_found', `${what} not found`);
export const forbidden = (message: string) => new ApiError('forbidden', message);
export const conflict = (message: string) => new ApiError('conflict', message);
export const unauthorized = (message: string) => new ApiError('unauthorized', message);

/** RFC 6749 §5.2 errors of the token endpoint. */
export class OAuthError extends Error {
  readonly status: number;
  constructor(
    readonly code: OAuthErrorCode,
    message: string,
  ) {
    super(message);
    this.name = 'OAuthError';
    this.status = oauthErrorStatus[code];
  }
}
