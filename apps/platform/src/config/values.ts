/** Raised for a bad setting: main.ts prints its message and exits 2. */
export class ConfigError extends Error {}

/** A whole number from `min` to 100000 (unset: `fallback`). */
export function boundedWholeNumber(
  text: string | undefined,
  name: string,
  fallback: number,
  min: number,
): number {
  if (text === undefined) return fallback;
  if (!/^\d+$/.test(text) || Number(text) < min || Number(text) > 100_000) {
    throw new ConfigError(`${name} must be a whole number from ${min} to 100000, got "${text}"`);
  }
  return Number(text);
}

/** A number setting under `key`, or nothing when unset (the engine's default applies). */
export function optionalNumber<K extends string>(
  text: string | undefined,
  name: string,
  key: K,
  rule: { min: number; integer: boolean },
): Partial<Record<K, number>> {
  if (text === undefined) return {};
  const n = Number(text);
  if (!Number.isFinite(n) || n < rule.min || (rule.integer && !Number.isInteger(n))) {
    const what = rule.integer ? 'a whole number' : 'a number';
    throw new ConfigError(`${name} must be ${what} of at least ${rule.min}, got "${text}"`);
  }
  return { [key]: n } as Partial<Record<K, number>>;
}

/** A whole number (0 or more) or the default when unset. */
export function wholeNumber(text: string | undefined, name: string, fallback: number): number {
  if (text === undefined) return fallback;
  if (!/^\d+$/.test(text)) throw new ConfigError(`${name} must be a whole number, got "${text}"`);
  return Number(text);
}

/** Whole megabytes as bytes; unset is undefined (the consumer's default). */
export function megabytes(text: string | undefined, name: string): number | undefined {
  if (text === undefined) return undefined;
  if (!/^\d+$/.test(text) || Number(text) < 1) {
    throw new ConfigError(`${name} must be a whole number of megabytes, got "${text}"`);
  }
  return Number(text) * 1024 * 1024;
}

/** A parser's own error (it names the variable) as a ConfigError: exit 2 with its message. */
export function asConfigError<T>(parse: () => T): T {
  try {
    return parse();
  } catch (error) {
    throw new ConfigError((error as Error).message);
  }
}
