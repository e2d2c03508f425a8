import { ConflictError, NotFoundError, TarmacConnectionError, ValidationError } from '@tarmac/sdk';
import { describe, expect, it } from 'vitest';
import { EXIT, explain, formatError } from './errors.js';

const init = { method: 'GET', url: 'u', body: undefined };

describe('explain', () => {
  it('turns SDK errors into one line with what failed, why, and what to do, and a stable exit code', () => {
    const missing = explain(
      'get sandboxes x',
      new NotFoundError({ ...init, status: 404, code: 'not_found', message: 'Sandbox "x" not found' }),
    );
    expect(formatError(missing)).toBe(
      'tarmac: get sandboxes x: Sandbox "x" not found (HTTP 404 not_found) (list what exists with `tarmac get <type>`)',
    );
    expect(missing.exitCode).toBe(EXIT.notFound);
    const down = explain(
      'list workspaces',
      new TarmacConnectionError('GET http://x failed: ECONNREFUSED', 'u'),
    );
    expect(formatError(down)).toMatch(
      /^tarmac: list workspaces: .*ECONNREFUSED \(is the platform running\? start it with `tarmac up`\)$/,
    );
    expect(down.exitCode).toBe(EXIT.unreachable);
    expect(
      explain('x', new ConflictError({ ...init, status: 409, code: 'conflict', message: 'exists' })).exitCode,
    ).toBe(EXIT.conflict);
  });

  it('lists the fields of a validation error on the same line', () => {
    const error = new ValidationError({
      ...init,
      status: 400,
      code: 'validation_error',
      message: 'Invalid request',
      details: [
        { field: 'metadata.name', message: 'must not be empty' },
        { field: 'spec.runtime.memory', message: 'must be at least 128 (MB)' },
      ],
    });
    expect(explain('create sandbox', error).exitCode).toBe(EXIT.usage); // help: bad argument is 2
    expect(formatError(explain('create sandbox', error))).toBe(
      'tarmac: create sandbox: metadata.name must not be empty; spec.runtime.memory must be at least 128 (MB) (fix the fields named above)',
    );
  });
});
