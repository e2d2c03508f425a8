import { managementErrorStatus, type FieldIssue } from '@tarmac/contract';

/**
 * Typed errors. Management errors come from the `{error, code, message, details}` body (contract
 * errors.ts); sandbox API errors from `{error}`. Callers branch with `instanceof` (by status) or on
 * `.code` (the machine-readable string, e.g. `not_found`, `cursor_expired`).
 */
export class TarmacError extends Error {
  override name = 'TarmacError';
}

/** Configuration is missing or malformed; raised before any request is sent. */
export class TarmacConfigError extends TarmacError {
  override name = 'TarmacConfigError';
}

/** The request never got an HTTP answer (refused, reset, DNS, aborted). */
export class TarmacConnectionError extends TarmacError {
  override name = 'TarmacConnectionError';
  constructor(
    message: string,
    readonly url: string,
    override readonly cause?: unknown,
  ) {
    super(message);
  }
}

/** A wait (sandbox status, process completion) ran out of time. */
export class TarmacTimeoutError extends TarmacError {
  override name = 'TarmacTimeoutError';
}

export interface ApiErrorInit {
  status: number;
  code: string;
  message: string;
  details?: FieldIssue[] | undefined;
  method: string;
  url: string;
  body: unknown;
}

/** An HTTP error answer of the management API or of a sandbox. */
export class TarmacApiError extends TarmacError {
  override name = 'TarmacApiError';
  readonly status: number;
  /** Machine-readable code: the body's `error` string (`not_found`, `conflict`, ...). */
  readonly code: string;
  readonly details: FieldIssue[] | undefined;
  readonly method: string;
  readonly url: string;
  readonly body: unknown;
  constructor(init: ApiErrorInit) {
    super(init.message);
    this.status = init.status;
    this.code = init.code;
    this.details = init.details;
    this.method = init.method;
    this.url = init.url;
    this.body = init.body;
  }
}

export class BadRequestError extends TarmacApiError {
  override name = 'BadRequestError';
}
/** 400 `validation_error`: `details` names each offending field. */
export class ValidationError extends BadRequestError {
  override name = 'ValidationError';
}
export class UnauthorizedError extends TarmacApiError {
  override name = 'UnauthorizedError';
}
export class ForbiddenError extends TarmacApiError {
  override name = 'ForbiddenError';
}
export class NotFoundError extends TarmacApiError {
  override name = 'NotFoundError';
}
export class ConflictError extends TarmacApiError {
  override name = 'ConflictError';
}
export class PayloadTooLargeError extends TarmacApiError {
  override name = 'PayloadTooLargeError';
}
/** 422 from a sandbox (e.g. a process wait timed out; the process keeps running). */
export class UnprocessableError extends TarmacApiError {
  override name = 'UnprocessableError';
}
export class RateLimitError extends TarmacApiError {
  override name = 'RateLimitError';
}
export class ServerError extends TarmacApiError {
  override name = 'ServerError';
}
export class UnavailableError extends ServerError {
  override name = 'UnavailableError';
}

const byStatus: Record<number, typeof TarmacApiError> = {
  400: BadRequestError,
  401: UnauthorizedError,
  403: ForbiddenError,
  404: NotFoundError,
  409: ConflictError,
  413: PayloadTooLargeError,
  422: UnprocessableError,
  429: RateLimitError,
  503: UnavailableError,
};

/** Status words used when a body carries no code (a proxy's HTML page, an empty 502...). */
const fallbackCode: Record<number, string> = {};
for (const [code, status] of Object.entries(managementErrorStatus)) fallbackCode[status] ??= code; // first wins: 404 → not_found

function pick(body: unknown, key: string): unknown {
  return typeof body === 'object' && body !== null ? (body as Record<string, unknown>)[key] : undefined;
}

/** Builds the typed error for an HTTP error answer from its parsed body (JSON, text or nothing). */
export function apiErrorFrom(status: number, body: unknown, method: string, url: string): TarmacApiError {
  const rawError = pick(body, 'error');
  // Edge errors nest: {error: {code, message}}; management: {error: "not_found", message}; sandbox: {error: "text"}.
  const nested = typeof rawError === 'object' && rawError !== null ? rawError : undefined;
  const message = String(
    pick(nested, 'message') ??
      pick(body, 'message') ??
      (typeof rawError === 'string' ? rawError : undefined) ??
      (typeof body === 'string' && body.trim() ? body.trim().slice(0, 300) : `HTTP ${status}`),
  );
  const codeText =
    (typeof pick(nested, 'code') === 'string' ? (pick(nested, 'code') as string).toLowerCase() : undefined) ??
    (typeof rawError === 'string' && /^[a-z_]+$/.test(rawError) ? rawError : undefined) ??
    fallbackCode[status] ??
    (status >= 500 ? 'internal_error' : 'error');
  const details = pick(body, 'details');
  let Ctor = byStatus[status] ?? (status >= 500 ? ServerError : TarmacApiError);
  if (codeText === 'validation_error') Ctor = ValidationError;
  return new Ctor({
    status,
    code: codeText,
    message,
    details: Array.isArray(details) ? (details as FieldIssue[]) : undefined,
    method,
    url,
    body,
  });
}
