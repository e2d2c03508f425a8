import { describe, expect, it } from 'vitest';
import {
  ConflictError,
  NotFoundError,
  ServerError,
  TarmacApiError,
  UnavailableError,
  UnprocessableError,
  ValidationError,
  apiErrorFrom,
} from './errors.js';

describe('apiErrorFrom', () => {
  it('maps a management body to the class of its status, keeping code, message and details', () => {
    const err = apiErrorFrom(404, { error: 'not_found', code: 404, message: 'no workspace "x"' }, 'GET', 'u');
    expect(err).toBeInstanceOf(NotFoundError);
    expect(err).toBeInstanceOf(TarmacApiError);
    expect([err.status, err.code, err.message, err.method]).toEqual([
      404,
      'not_found',
      'no workspace "x"',
      'GET',
    ]);
  });

  it('makes validation errors a ValidationError with field details', () => {
    const details = [{ field: 'metadata.name', message: 'must not be empty' }];
    const err = apiErrorFrom(
      400,
      { error: 'validation_error', code: 400, message: 'invalid', details },
      'POST',
      'u',
    );
    expect(err).toBeInstanceOf(ValidationError);
    expect(err.details).toEqual(details);
  });

  it('reads sandbox `{error: text}` bodies and edge `{error: {code, message}}` bodies', () => {
    const sandbox = apiErrorFrom(422, { error: 'process timed out after 1 seconds' }, 'POST', 'u');
    expect(sandbox).toBeInstanceOf(UnprocessableError);
    expect(sandbox.message).toBe('process timed out after 1 seconds');
    const missingFile = apiErrorFrom(404, { error: '/x: no such file or directory' }, 'GET', 'u');
    expect([missingFile.code, missingFile.message]).toEqual(['not_found', '/x: no such file or directory']);
    const edge = apiErrorFrom(
      404,
      { error: { code: 'WORKLOAD_NOT_FOUND', message: 'no sandbox' } },
      'GET',
      'u',
    );
    expect([edge.code, edge.message]).toEqual(['workload_not_found', 'no sandbox']);
  });

  it('falls back to status words for bodies without a code', () => {
    expect(apiErrorFrom(409, undefined, 'POST', 'u')).toBeInstanceOf(ConflictError);
    const html = apiErrorFrom(502, '<html>bad gateway</html>', 'GET', 'u');
    expect(html).toBeInstanceOf(ServerError);
    expect(html.message).toBe('<html>bad gateway</html>');
    expect(apiErrorFrom(503, {}, 'GET', 'u')).toBeInstanceOf(UnavailableError);
  });
});
