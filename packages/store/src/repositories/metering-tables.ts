// Table shapes of the metering migration (010-metering), kept beside their repository so the
// shared schema.ts stays untouched; the repository widens its Kysely with `withTables`.

export type MeteringSamplesTable = {
  idempotency_key: string;
  account_id: string;
  workspace: string;
  resource_type: string;
  resource_name: string;
  resource_uuid: string;
  dimension: string;
  start_at: string;
  end_at: string;
  quantity: number;
  recorded_at: string;
};

/** One row per (account, period, resource, dimension): the summed quantity of that period. */
export type MeteringRollupTable = {
  account_id: string;
  period: string;
  workspace: string;
  resource_type: string;
  resource_name: string;
  resource_uuid: string;
  dimension: string;
  quantity: number;
};

export type MeteringTables = {
  metering_samples: MeteringSamplesTable;
  metering_hourly: MeteringRollupTable;
  metering_daily: MeteringRollupTable;
  metering_monthly: MeteringRollupTable;
};

export type RollupGrain = 'hour' | 'day' | 'month';
export const ROLLUP_TABLE: Record<RollupGrain, 'metering_hourly' | 'metering_daily' | 'metering_monthly'> = {
  hour: 'metering_hourly',
  day: 'metering_daily',
  month: 'metering_monthly',
};

/** The columns a usage query may group or filter by, in canonical order. */
export const USAGE_KEY_COLUMNS = [
  'workspace',
  'resource_type',
  'resource_name',
  'resource_uuid',
  'dimension',
] as const;
export type UsageKeyColumn = (typeof USAGE_KEY_COLUMNS)[number];

/** Start of the UTC hour, day or month holding `ms`, as the fixed-width ISO text the tables store. */
export function periodOf(grain: RollupGrain, ms: number): string {
  const d = new Date(ms);
  if (grain === 'hour') d.setUTCMinutes(0, 0, 0);
  else if (grain === 'day') d.setUTCHours(0, 0, 0, 0);
  else {
    d.setUTCHours(0, 0, 0, 0);
    d.setUTCDate(1);
  }
  return d.toISOString();
}
