import {
  BILLING_DIMENSIONS,
  defaultResolution,
  type BillingDimension,
  parseRfc3339Utc,
  type AccountMetricsQuery,
  type AccountMetricsResponse,
  type GroupByDimension,
  type MetricsEntry,
  type Resolution,
} from '@tarmac/contract';
import {
  USAGE_KEY_COLUMNS,
  type MeteringRepository,
  type UsageKeyColumn,
  type UsageRow,
} from '@tarmac/store';
import { bucketStart, bucketStarts, iso, planSegments } from './calendar.js';
import type { PriceTable } from './prices.js';

/**
 * Spec "Which entry fields are filled": grouping by a dimension fills these columns. The union over
 * the requested dimensions is what the query groups by — so grouping by resource_name keeps two
 * same-named resources of different workspaces apart ("enrichment adds contextual fields").
 */
const FILLED_BY: Record<GroupByDimension, readonly UsageKeyColumn[]> = {
  workspace: ['workspace'],
  resource_type: ['resource_type'],
  resource_name: ['workspace', 'resource_type', 'resource_name'],
  resource_uuid: ['workspace', 'resource_type', 'resource_name', 'resource_uuid'],
  billing_dimension: ['resource_type', 'dimension'],
};

const ENTRY_FIELD: Record<UsageKeyColumn, keyof MetricsEntry> = {
  workspace: 'workspace',
  resource_type: 'resourceType',
  resource_name: 'resourceName',
  resource_uuid: 'resourceUuid',
  dimension: 'billingDimension',
};

export function groupColumnsOf(groupBy: readonly GroupByDimension[]): UsageKeyColumn[] {
  const wanted = new Set(groupBy.flatMap((d) => FILLED_BY[d]));
  return USAGE_KEY_COLUMNS.filter((c) => wanted.has(c));
}

export interface MetricsScope {
  accountId: string;
  /** Workspaces the caller may see; undefined for an account admin (every workspace, even deleted). */
  workspaces: readonly string[] | undefined;
}

export interface MetricsPage {
  response: Omit<AccountMetricsResponse, 'meta'>;
  hasMore: boolean;
  /** Key of the last group of the page (for the cursor). */
  lastKey: string[] | undefined;
}

/** Answers the metrics API from the rollups (ARCHITECTURE.md "Query engine"). */
export class MetricsQueryEngine {
  constructor(
    private readonly metering: Pick<MeteringRepository, 'aggregate' | 'resourceTypes'>,
    private readonly prices: PriceTable,
  ) {}

  async query(
    q: AccountMetricsQuery,
    scope: MetricsScope,
    after: string[] | undefined,
  ): Promise<MetricsPage> {
    const start = parseRfc3339Utc(q.startTime)!;
    const end = parseRfc3339Utc(q.endTime)!;
    const resolution: Resolution = q.resolution ?? defaultResolution(end - start);
    const groupBy = q.groupBy ?? [];
    const withUsage = groupBy.includes('billing_dimension');
    const columns = groupColumnsOf(groupBy);
    const buckets = bucketStarts(resolution, start, end);
    const base = {
      accountId: scope.accountId,
      segments: planSegments(resolution, start, end),
      workspaces: scope.workspaces,
      prices: this.prices,
      filters: {
        workspace: q.workspace,
        resource_type: q.resourceType,
        resource_name: q.resourceName,
        resource_uuid: q.resourceUuid,
        dimension: q.billingDimension,
      },
    };
    const series = (rows: UsageRow[], keyOf: (row: UsageRow) => string) => {
      const index = new Map(buckets.map((b, i) => [b, i]));
      const out = new Map<string, { cost: number; usage: number }[]>();
      for (const row of rows) {
        const key = keyOf(row);
        let points = out.get(key);
        if (!points) out.set(key, (points = buckets.map(() => ({ cost: 0, usage: 0 }))));
        const i = index.get(bucketStart(resolution, Date.parse(row.period!)));
        if (i === undefined) continue; // cannot happen: segments lie inside the window
        points[i]!.cost += row.cost;
        points[i]!.usage += row.usage;
      }
      return (key: string) =>
        (out.get(key) ?? buckets.map(() => ({ cost: 0, usage: 0 }))).map((p, i) => ({
          timestamp: iso(buckets[i]!),
          cost: p.cost,
          ...(withUsage ? { usage: p.usage } : {}),
        }));
    };
    const header = { startTime: q.startTime, endTime: q.endTime, resolution };

    if (columns.length === 0) {
      const rows = await this.metering.aggregate({ ...base, groupColumns: [], byPeriod: true });
      const cost = rows.reduce((s, r) => s + r.cost, 0);
      const entry: MetricsEntry = { summary: { cost }, timeseries: series(rows, () => '')('') };
      return {
        response: { ...header, summary: { totalCost: cost }, data: [entry] },
        hasMore: false,
        lastKey: undefined,
      };
    }

    // One scan: the page of groups, each row carrying the window's totals over all groups.
    const page = await this.metering.aggregate({
      ...base,
      groupColumns: columns,
      after,
      limit: q.limit + 1,
      withTotals: true,
    });
    const hasMore = page.length > q.limit;
    const groups = page.slice(0, q.limit);
    const total = page[0]
      ? { cost: page[0].totalCost ?? 0, usage: page[0].totalUsage ?? 0 }
      : (await this.metering.aggregate({ ...base, groupColumns: [] }))[0]; // a page past the end
    const first = groups[0];
    const last = groups[groups.length - 1];
    const points =
      first && last
        ? await this.metering.aggregate({
            ...base,
            groupColumns: columns,
            byPeriod: true,
            range: { first: first.keys, last: last.keys },
          })
        : [];
    const timeseriesOf = series(points, (r) => JSON.stringify(r.keys));
    const data = groups.map((g) => {
      const entry: MetricsEntry = {
        summary: { cost: g.cost, ...(withUsage ? { usage: g.usage } : {}) },
        timeseries: timeseriesOf(JSON.stringify(g.keys)),
      };
      columns.forEach((c, i) => Object.assign(entry, { [ENTRY_FIELD[c]]: g.keys[i] }));
      return entry;
    });
    const summary = {
      totalCost: total?.cost ?? 0,
      ...(withUsage && (await this.oneUnit(base, q.billingDimension))
        ? { totalUsage: total?.usage ?? 0 }
        : {}),
    };
    return { response: { ...header, summary, data }, hasMore, lastKey: last?.keys };
  }

  /**
   * Whether the window's usage is all in one unit (spec "summary.totalUsage … single unit
   * guaranteed"; issue 14 item 8): grouped by dimension, GB-s, counts and hours would otherwise
   * be added up. One dimension filter is one unit; else the window's dimensions are looked up.
   */
  private async oneUnit(
    base: Omit<Parameters<MeteringRepository['aggregate']>[0], 'groupColumns'>,
    dimension: string | undefined,
  ): Promise<boolean> {
    if (dimension !== undefined) return true;
    const rows = await this.metering.aggregate({ ...base, groupColumns: ['dimension'] });
    const units = new Set(
      rows.map((r) => BILLING_DIMENSIONS[r.keys[0] as BillingDimension]?.unit ?? `?${r.keys[0]}`),
    );
    return units.size <= 1;
  }

  /** Resource types with usage in the window, among the workspaces the caller sees. */
  async resourceTypes(startTime: string, endTime: string, scope: MetricsScope): Promise<string[]> {
    const start = parseRfc3339Utc(startTime)!;
    const end = parseRfc3339Utc(endTime)!;
    return this.metering.resourceTypes({
      accountId: scope.accountId,
      workspaces: scope.workspaces,
      segments: planSegments('monthly', start, end),
    });
  }
}
