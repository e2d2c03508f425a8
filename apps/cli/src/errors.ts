import {
  ConflictError,
  ForbiddenError,
  NotFoundError,
  TarmacApiError,
  TarmacConfigError,
  TarmacConnectionError,
  TarmacTimeoutError,
  UnauthorizedError,
  ValidationError,
} from '@tarmac/sdk';

/**
 * Exit codes scripts can rely on (also printed by `tarmac --help`). A command run by
 * `sandbox exec` exits with its own code instead.
 */
export const EXIT = {
  ok: 0,
  error: 1,
  usage: 2,
  notFound: 3,
  auth: 4,
  conflict: 5,
  unreachable: 6,
  timeout: 7,
  config: 8,
} as const;

export const EXIT_CODES_HELP = `Exit codes:
  0  success
  1  other error (server error, failed sandbox...)
  2  usage error (unknown command or option, bad argument)
  3  not found
  4  not authenticated or not allowed (401/403)
  5  conflict (already exists, in use)
  6  platform unreachable (connection refused, DNS)
  7  timed out waiting
  8  no configuration (run \`tarmac login\`)
  sandbox exec exits with the command's own exit code.`;

/** A malformed command-line argument: the CLI exits with the usage code (2), as its help says. */
export class ArgumentError extends Error {}

/** An error the CLI reports as `tarmac: <what failed>: <why> (<what to do>)`. */
export class CliError extends Error {
  constructor(
    readonly what: string,
    readonly why: string,
    readonly hint?: string,
    readonly exitCode: number = EXIT.error,
  ) {
    super(`${what}: ${why}`);
  }
}

/** What to do next for a failure of each kind. */
function hintFor(error: unknown): string | undefined {
  if (error instanceof UnauthorizedError) return 'check your API key, or run `tarmac login`';
  if (error instanceof ForbiddenError) return 'ask a workspace admin for access';
  if (error instanceof ValidationError) return 'fix the fields named above';
  if (error instanceof ArgumentError) return 'see `tarmac <command> --help`';
  if (error instanceof NotFoundError) return 'list what exists with `tarmac get <type>`';
  if (error instanceof ConflictError) return 'pick another name, or delete the existing one first';
  if (error instanceof TarmacConnectionError) return 'is the platform running? start it with `tarmac up`';
  if (error instanceof TarmacConfigError)
    return 'run `tarmac login` or set TARMAC_API_URL and TARMAC_API_KEY';
  return undefined;
}

export function exitCodeFor(error: unknown): number {
  if (error instanceof CliError) return error.exitCode;
  // A bad argument, whether the CLI or the server found it (400 naming the field): help says 2.
  if (error instanceof ArgumentError || error instanceof ValidationError) return EXIT.usage;
  if (error instanceof NotFoundError) return EXIT.notFound;
  if (error instanceof UnauthorizedError || error instanceof ForbiddenError) return EXIT.auth;
  if (error instanceof ConflictError) return EXIT.conflict;
  if (error instanceof TarmacConnectionError) return EXIT.unreachable;
  if (error instanceof TarmacTimeoutError) return EXIT.timeout;
  if (error instanceof TarmacConfigError) return EXIT.config;
  return EXIT.error;
}

/** Wraps any failure of `what` (e.g. `get sandboxes`) into a CliError with one readable line. */
export function explain(what: string, error: unknown): CliError {
  if (error instanceof CliError) return error;
  let why = error instanceof Error ? error.message : String(error);
  if (error instanceof ValidationError && error.details?.length) {
    why = error.details.map((d) => `${d.field} ${d.message}`).join('; ');
  } else if (error instanceof TarmacApiError) {
    why = `${why} (HTTP ${error.status} ${error.code})`.replace(/\s+/g, ' ');
  }
  return new CliError(what, why.replace(/\s*\n\s*/g, ' ').trim(), hintFor(error), exitCodeFor(error));
}

export function formatError(error: CliError): string {
  return `tarmac: ${error.what}: ${error.why}${error.hint ? ` (${error.hint})` : ''}`;
}
