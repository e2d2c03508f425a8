import type { FieldIssue } from '@tarmac/contract';
import type { z } from 'zod';
import { ApiError } from './errors.js';

/** Turns zod issues into field-naming details, e.g. `body.metadata.name: must be at most 49 characters`. */
export function fieldIssues(prefix: string, error: z.ZodError): FieldIssue[] {
  return error.issues.map((issue) => {
    const path = [prefix, ...issue.path.map(String)].filter(Boolean).join('.');
    const unknownKeys = issue.code === 'unrecognized_keys' ? issue.keys : [];
    if (unknownKeys.length > 0) {
      return {
        field: `${path}.${unknownKeys[0]}`,
        message: `unknown field${unknownKeys.length > 1 ? 's' : ''} ${unknownKeys.join(', ')}`,
      };
    }
    const message =
      issue.code === 'invalid_type' && issue.input === undefined ? 'is required' : issue.message;
    return { field: path, message };
  });
}

export function parseOrThrow<T extends z.ZodType>(schema: T, value: unknown, prefix: string): z.output<T> {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  const details = fieldIssues(prefix, result.error);
  const summary = details.map((d) => `${d.field}: ${d.message}`).join('; ');
  throw new ApiError('validation_error', `Invalid request: ${summary}`, { details });
}
