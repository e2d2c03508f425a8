// The one error vocabulary of the sandbox plane (reference sandbox-api.md §1.1): every failure is
// an HttpError carrying a status, rendered by the app's single error handler as `{error}`.
export class HttpError extends Error {
  constructor(
    readonly status: 400 | 401 | 404 | 405 | 409 | 413 | 416 | 422 | 429 | 500 | 501 | 503,
    message: string,
    /** Response headers the status calls for (a 405's `Allow`). */
    readonly headers: Readonly<Record<string, string>> = {},
  ) {
    super(message);
  }
}

export const badRequest = (msg: string): HttpError => new HttpError(400, msg);
export const notFound = (msg: string): HttpError => new HttpError(404, msg);
export const unprocessable = (msg: string): HttpError => new HttpError(422, msg);

/** Maps a node fs error to the reference's statuses: missing → 404, anything else → 422. */
export function fsError(err: unknown, what: string): HttpError {
  if (err instanceof HttpError) return err;
  const code = (err as NodeJS.ErrnoException | undefined)?.code;
  const msg = err instanceof Error ? err.message : String(err);
  if (code === 'ENOENT') return notFound(`${what}: no such file or directory`);
  return unprocessable(`${what}: ${msg}`);
}

export function errorMessage(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
