import { DEFAULT_METERING_INTERVAL_SECONDS } from '../planes/metering/metering.js';
import { DEFAULT_PRICES, priceOverridesSchema, type PriceTable } from '../planes/metering/prices.js';
import { ConfigError } from './values.js';

/** Prices from a JSON object of overrides, e.g. `{"sandbox_compute_runtime_gbs": 0.00003}`. */
export function prices(overridesJson: string | undefined): PriceTable {
  if (!overridesJson) return DEFAULT_PRICES;
  let parsed: unknown;
  try {
    parsed = JSON.parse(overridesJson);
  } catch {
    throw new ConfigError('TARMAC_METERING_PRICES must be a JSON object of dimension → USD per unit');
  }
  const result = priceOverridesSchema.safeParse(parsed);
  if (!result.success) {
    const issue = result.error.issues[0];
    throw new ConfigError(
      `TARMAC_METERING_PRICES: ${issue?.path.join('.') || '(root)'}: ${issue?.message ?? 'invalid'}`,
    );
  }
  return { ...DEFAULT_PRICES, ...result.data };
}

/** `TARMAC_METERING_INTERVAL_SECONDS` → milliseconds; a positive number of seconds, default 60. */
export function meteringIntervalMs(text: string | undefined): number {
  if (text === undefined) return DEFAULT_METERING_INTERVAL_SECONDS * 1000;
  const seconds = Number(text);
  if (!Number.isFinite(seconds) || seconds <= 0 || seconds > 3600) {
    throw new ConfigError(
      `TARMAC_METERING_INTERVAL_SECONDS must be a number of seconds from 0 to 3600, got "${text}"`,
    );
  }
  return Math.round(seconds * 1000);
}
