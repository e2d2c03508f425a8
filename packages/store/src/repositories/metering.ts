import { sql, type Kysely, type RawBuilder } from 'kysely';
import type { Database } from '../schema.js';
import {
  periodOf,
  ROLLUP_TABLE,
  USAGE_KEY_COLUMNS,
  type MeteringTables,
  type RollupGrain,
  type UsageKeyColumn,
} from './metering-tables.js';

/** One usage sample: `quantity` units of `dimension` consumed by one resource during [startAt, endAt). */
export interface UsageSample {
  /** Same key, same sample: a retried or replayed write is ignored (never double counted). */
  idempotencyKey: string;
  accountId: string;
  workspace: string;
  resourceType: string;
  resourceName: string;
  resourceUuid: string;
  dimension: string;
  /** ISO 8601 UTC; a sample lies within one UTC hour (the rollup grain). */
  startAt: string;
  endAt: string;
  quantity: number;
}

export interface UsageSegment {
  grain: RollupGrain;
  /** ISO period starts, [from, to) — aligned to the grain. */
  from: string;
  to: string;
}

export type UsageFilters = Partial<Record<UsageKeyColumn, string>>;

export interface UsageQuery {
  accountId: string;
  /** Disjoint period ranges whose union is the window, each read from its rollup. */
  segments: readonly UsageSegment[];
  /** Only these workspaces (the caller's visibility); undefined = every workspace of the account. */
  workspaces?: readonly string[] | undefined;
  filters: UsageFilters;
  /** Group by these columns (canonical order) — and by period when `byPeriod`. */
  groupColumns: readonly UsageKeyColumn[];
  byPeriod?: boolean;
  /** USD per unit, by dimension; a dimension without a price costs 0. */
  prices: Readonly<Record<string, number>>;
  /** Keyset: groups strictly after this key tuple. */
  after?: readonly string[] | undefined;
  /** Only groups within [first, last] (inclusive key tuples). */
  range?: { first: readonly string[]; last: readonly string[] } | undefined;
  limit?: number | undefined;
  /**
   * Also return, on every row, the totals over ALL groups of the window (before `after` and
   * `limit`): one scan gives a page and the summary (window function `sum(sum(…)) over ()`).
   */
  withTotals?: boolean;
}

export interface UsageRow {
  /** Period start (ISO) when grouped by period. */
  period?: string;
  keys: string[];
  cost: number;
  usage: number;
  /** With `withTotals`: cost and usage of every group of the window. */
  totalCost?: number;
  totalUsage?: number;
}

const BATCH = 500;

/**
 * Row-value comparison `(c1, c2, …) op (v1, v2, …)` (SQLite ≥ 3.15 and PostgreSQL): lexicographic,
 * and usable as a range on an index whose columns follow in that order.
 */
function tupleCompare(
  columns: readonly UsageKeyColumn[],
  values: readonly string[],
  op: '>' | '<' | '>=' | '<=',
): RawBuilder<boolean> {
  const refs = sql.join(columns.map((c) => sql.ref(c)));
  const vals = sql.join(columns.map((_, i) => sql`${values[i]}`));
  return columns.length === 1
    ? sql<boolean>`${refs} ${sql.raw(op)} ${vals}`
    : sql<boolean>`(${refs}) ${sql.raw(op)} (${vals})`;
}

/**
 * The metering store: an append-only sample log and hour/day/month rollups kept in step with it
 * (each inserted sample is added to its three rollup rows in the same transaction).
 */
export function meteringRepository(base: Kysely<Database>) {
  const db = base.withTables<MeteringTables>();

  async function addToRollups(trx: typeof db, inserted: UsageSample[]): Promise<void> {
    for (const grain of ['hour', 'day', 'month'] as const) {
      const sums = new Map<
        string,
        { row: Omit<UsageSample, 'idempotencyKey' | 'startAt' | 'endAt'>; period: string }
      >();
      for (const s of inserted) {
        const period = periodOf(grain, Date.parse(s.startAt));
        const key = JSON.stringify([
          s.accountId,
          period,
          s.workspace,
          s.resourceType,
          s.resourceName,
          s.resourceUuid,
          s.dimension,
        ]);
        const entry = sums.get(key);
        if (entry) entry.row.quantity += s.quantity;
        else sums.set(key, { period, row: { ...s, quantity: s.quantity } });
      }
      const values = [...sums.values()].map(({ row, period }) => ({
        account_id: row.accountId,
        period,
        workspace: row.workspace,
        resource_type: row.resourceType,
        resource_name: row.resourceName,
        resource_uuid: row.resourceUuid,
        dimension: row.dimension,
        quantity: row.quantity,
      }));
      const table = ROLLUP_TABLE[grain] as 'metering_hourly';
      for (let i = 0; i < values.length; i += BATCH) {
        await trx
          .insertInto(table)
          .values(values.slice(i, i + BATCH))
          .onConflict((oc) =>
            oc
              .columns([
                'account_id',
                'period',
                'workspace',
                'resource_type',
                'resource_name',
                'resource_uuid',
                'dimension',
              ])
              .doUpdateSet({ quantity: sql`${sql.ref(`${table}.quantity`)} + excluded.quantity` }),
          )
          .execute();
      }
    }
  }

  async function recordIn(
    trx: typeof db,
    samples: readonly UsageSample[],
    recordedAt: string,
  ): Promise<number> {
    const inserted: UsageSample[] = [];
    const byKey = new Map(samples.map((s) => [s.idempotencyKey, s]));
    const unique = [...byKey.values()];
    for (let i = 0; i < unique.length; i += BATCH) {
      const rows = await trx
        .insertInto('metering_samples')
        .values(
          unique.slice(i, i + BATCH).map((s) => ({
            idempotency_key: s.idempotencyKey,
            account_id: s.accountId,
            workspace: s.workspace,
            resource_type: s.resourceType,
            resource_name: s.resourceName,
            resource_uuid: s.resourceUuid,
            dimension: s.dimension,
            start_at: s.startAt,
            end_at: s.endAt,
            quantity: s.quantity,
            recorded_at: recordedAt,
          })),
        )
        .onConflict((oc) => oc.column('idempotency_key').doNothing())
        .returning('idempotency_key')
        .execute();
      for (const r of rows) inserted.push(byKey.get(r.idempotency_key)!);
    }
    await addToRollups(trx, inserted);
    return inserted.length;
  }

  function segmentSelect(q: UsageQuery, segment: UsageSegment, columns: readonly UsageKeyColumn[]) {
    const table = sql.table(ROLLUP_TABLE[segment.grain]);
    const where: RawBuilder<unknown>[] = [
      sql`account_id = ${q.accountId}`,
      sql`period >= ${segment.from}`,
      sql`period < ${segment.to}`,
    ];
    for (const column of USAGE_KEY_COLUMNS) {
      const value = q.filters[column];
      if (value !== undefined) where.push(sql`${sql.ref(column)} = ${value}`);
    }
    if (q.workspaces) {
      where.push(
        q.workspaces.length === 0
          ? sql`1 = 0`
          : sql`workspace in (${sql.join(q.workspaces.map((w) => sql`${w}`))})`,
      );
    }
    if (q.after && columns.length > 0 && !q.withTotals) where.push(tupleCompare(columns, q.after, '>'));
    if (q.range && columns.length > 0) {
      where.push(tupleCompare(columns, q.range.first, '>='));
      where.push(tupleCompare(columns, q.range.last, '<='));
    }
    return { table, where: sql.join(where, sql` and `) };
  }

  return {
    /**
     * Appends samples and adds the new ones to the rollups, atomically. Samples whose idempotency
     * key is already recorded are skipped; returns how many were new.
     */
    async record(samples: readonly UsageSample[], recordedAt: string): Promise<number> {
      for (const s of samples) {
        const start = Date.parse(s.startAt);
        const end = Date.parse(s.endAt);
        if (
          !(end > start) ||
          periodOf('hour', start) !== periodOf('hour', end - 1) ||
          !Number.isFinite(s.quantity)
        ) {
          throw new Error(
            `metering sample ${s.idempotencyKey} must be a finite quantity within one UTC hour`,
          );
        }
      }
      if (samples.length === 0) return 0;
      if (db.isTransaction) return recordIn(db, samples, recordedAt);
      return db.transaction().execute((trx) => recordIn(trx, samples, recordedAt));
    },

    /** Summed cost and usage per group (and per period), ordered by the group key. */
    async aggregate(q: UsageQuery): Promise<UsageRow[]> {
      const columns = q.groupColumns;
      const cases = Object.entries(q.prices).map(([dim, price]) => sql`when ${dim} then ${sql.lit(price)}`);
      const priceOf = cases.length > 0 ? sql`case dimension ${sql.join(cases, sql` `)} else 0 end` : sql`0`;
      const select = [...(q.byPeriod ? [sql`period`] : []), ...columns.map((c) => sql.ref(c))];
      const branches = q.segments.map((segment) => {
        const { table, where } = segmentSelect(q, segment, columns);
        const keys = select.length > 0 ? sql`${sql.join(select)}, ` : sql``;
        const groupBy = select.length > 0 ? sql` group by ${sql.join(select)}` : sql``;
        return sql`select ${keys}sum(quantity * ${priceOf}) as cost, sum(quantity) as usage from ${table} where ${where}${groupBy}`;
      });
      if (branches.length === 0) return [];
      const union = sql.join(branches, sql` union all `);
      const outerKeys = select.length > 0 ? sql`${sql.join(select)}, ` : sql``;
      const order = [...columns.map((c) => sql.ref(c)), ...(q.byPeriod ? [sql`period`] : [])];
      const grouped = select.length > 0 ? sql` group by ${sql.join(select)}` : sql``;
      const ordered = select.length > 0 ? sql` order by ${sql.join(order)}` : sql``;
      const limit = q.limit !== undefined ? sql` limit ${sql.lit(q.limit)}` : sql``;
      let query: RawBuilder<Record<string, unknown>>;
      if (q.withTotals && columns.length > 0) {
        const after = q.after ? sql` where ${tupleCompare(columns, q.after, '>')}` : sql``;
        query = sql`select * from (select ${outerKeys}sum(cost) as cost, sum(usage) as usage, sum(sum(cost)) over () as total_cost, sum(sum(usage)) over () as total_usage from (${union}) u${grouped}) g${after}${ordered}${limit}`;
      } else {
        query = sql`select ${outerKeys}sum(cost) as cost, sum(usage) as usage from (${union}) u${grouped}${ordered}${limit}`;
      }
      const { rows } = await query.execute(db);
      return rows
        .filter((r) => r.cost !== null || r.usage !== null)
        .map((r) => ({
          ...(q.byPeriod ? { period: String(r.period) } : {}),
          keys: columns.map((c) => String(r[c])),
          cost: Number(r.cost ?? 0),
          usage: Number(r.usage ?? 0),
          ...(q.withTotals
            ? { totalCost: Number(r.total_cost ?? 0), totalUsage: Number(r.total_usage ?? 0) }
            : {}),
        }));
    },

    /** Distinct resource types with usage in the segments. */
    async resourceTypes(q: Pick<UsageQuery, 'accountId' | 'segments' | 'workspaces'>): Promise<string[]> {
      const full: UsageQuery = { ...q, filters: {}, groupColumns: ['resource_type'], prices: {} };
      const branches = q.segments.map((segment) => {
        const { table, where } = segmentSelect(full, segment, []);
        return sql`select distinct resource_type from ${table} where ${where}`;
      });
      if (branches.length === 0) return [];
      const { rows } = await sql<{
        resource_type: string;
      }>`select distinct resource_type from (${sql.join(branches, sql` union all `)}) u order by resource_type`.execute(
        db,
      );
      return rows.map((r) => r.resource_type);
    },

    /** Samples of one resource (tests, audits), oldest first. */
    async samplesOf(resourceUuid: string): Promise<UsageSample[]> {
      const rows = await db
        .selectFrom('metering_samples')
        .selectAll()
        .where('resource_uuid', '=', resourceUuid)
        .orderBy('start_at')
        .orderBy('dimension')
        .execute();
      return rows.map((r) => ({
        idempotencyKey: r.idempotency_key,
        accountId: r.account_id,
        workspace: r.workspace,
        resourceType: r.resource_type,
        resourceName: r.resource_name,
        resourceUuid: r.resource_uuid,
        dimension: r.dimension,
        startAt: r.start_at,
        endAt: r.end_at,
        quantity: Number(r.quantity),
      }));
    },
  };
}

export type MeteringRepository = ReturnType<typeof meteringRepository>;
