/**
 * `maxToken` policies (reference §2.3; issue 18): tokens per period of `step` × `granularity`
 * (minute, hour, day: fixed UTC windows from the epoch; month: calendar months), counted from the
 * usage providers report. Input, output and total are checked separately; 0 disables a check.
 * Reference: "once the cap is exceeded, later requests get 429; the first request over the limit
 * still passes" — so a request is refused when the period's count already reached the cap.
 *
 * Counts are per (workspace, model, policy), in this process's memory: the request path does not
 * wait for the store, except the first request of a key in a period, which reads the model's
 * tokens of the period so far from the metering rollups (`UsageHistory`, handed in) so a restart
 * does not reset budgets. Minute-granularity periods are shorter than the rollups' hour and start
 * at zero in a new process.
 */
import type { PolicySpec } from '@tarmac/contract';
import type { Usage } from './adapters/adapter.js';
import { GatewayError } from './gateway-error.js';

type Budget = NonNullable<PolicySpec['maxTokens']>;
interface Count {
  period: number;
  input: number;
  output: number;
  total: number;
}

const UNIT_MS = { minute: 60_000, hour: 3_600_000, day: 86_400_000 } as const;

/** The period index of `now` and when it ends (epoch ms). */
export function periodOf(
  b: Pick<Budget, 'granularity' | 'step'>,
  now: number,
): { index: number; endsAt: number } {
  const step = Math.max(1, b.step);
  if (b.granularity === 'month') {
    const d = new Date(now);
    const months = d.getUTCFullYear() * 12 + d.getUTCMonth();
    const index = Math.floor(months / step);
    const next = (index + 1) * step;
    return { index, endsAt: Date.UTC(Math.floor(next / 12), next % 12, 1) };
  }
  const len = UNIT_MS[b.granularity] * step;
  const index = Math.floor(now / len);
  return { index, endsAt: (index + 1) * len };
}

export interface BudgetTarget {
  workspace: string;
  name: string;
  uuid: string;
  accountId: string;
  policies: ReadonlyArray<{ name: string; spec: PolicySpec }>;
}

/** The model's tokens recorded from `fromMs` (an hour boundary) on: the metering plane's rollups. */
export interface UsageHistory {
  tokensSince(
    target: { accountId: string; uuid: string },
    fromMs: number,
  ): Promise<{ input: number; output: number }>;
}

/** Start of the period `index` (inverse of periodOf). */
function periodStart(b: Pick<Budget, 'granularity' | 'step'>, index: number): number {
  const step = Math.max(1, b.step);
  if (b.granularity === 'month') {
    const months = index * step;
    return Date.UTC(Math.floor(months / 12), months % 12, 1);
  }
  return index * UNIT_MS[b.granularity] * step;
}

export class TokenBudgets {
  private readonly counts = new Map<string, Count>();
  private readonly seeding = new Map<string, Promise<void>>();

  constructor(
    private readonly now: () => number = Date.now,
    private readonly history?: UsageHistory,
  ) {}

  /** Throws 429 naming the first policy whose budget of the current period is used up. */
  async check(m: BudgetTarget): Promise<void> {
    const now = this.now();
    for (const p of m.policies) {
      const b = p.spec.type === 'maxToken' ? p.spec.maxTokens : undefined;
      if (!b) continue;
      const { index, endsAt } = periodOf(b, now);
      const k = key(m, p.name);
      if (this.counts.get(k)?.period !== index) await this.seed(m, k, b, index);
      const c = this.counts.get(k);
      if (!c || c.period !== index) continue;
      const over = (['input', 'output', 'total'] as const).find((k) => b[k] > 0 && c[k] >= b[k]);
      if (over) {
        const seconds = Math.max(1, Math.ceil((endsAt - now) / 1000));
        throw new GatewayError(
          429,
          `token budget of policy "${p.name}" is used up: ${c[over]} ${over} tokens of ${b[over]} per ${b.step} ${b.granularity}(s); it resets at ${new Date(endsAt).toISOString()}`,
          null,
          'token_budget_exceeded',
          { 'retry-after': String(seconds) },
        );
      }
    }
  }

  /** Once per key and period: the period's count so far, from the store (best effort). */
  private seed(m: BudgetTarget, k: string, b: Budget, index: number): Promise<void> {
    if (!this.history || b.granularity === 'minute') return Promise.resolve();
    const sk = `${k}\u0000${index}`;
    let pending = this.seeding.get(sk);
    if (!pending) {
      pending = this.history.tokensSince(m, periodStart(b, index)).then(
        (t) => {
          const c = this.counts.get(k);
          if (c && c.period === index) {
            c.input += t.input;
            c.output += t.output;
            c.total += t.input + t.output;
          } else
            this.counts.set(k, {
              period: index,
              input: t.input,
              output: t.output,
              total: t.input + t.output,
            });
        },
        () => undefined, // the store is down: count from here on rather than refuse every call
      );
      if (this.seeding.size > 10_000) this.seeding.clear();
      this.seeding.set(sk, pending);
    }
    return pending;
  }

  add(m: BudgetTarget, usage: Usage): void {
    const now = this.now();
    for (const p of m.policies) {
      const b = p.spec.type === 'maxToken' ? p.spec.maxTokens : undefined;
      if (!b) continue;
      const { index } = periodOf(b, now);
      const k = key(m, p.name);
      let c = this.counts.get(k);
      if (!c || c.period !== index)
        this.counts.set(k, (c = { period: index, input: 0, output: 0, total: 0 }));
      c.input += usage.prompt;
      c.output += usage.completion;
      c.total += usage.total;
    }
  }
}

const key = (m: BudgetTarget, policy: string) => `${m.workspace}\u0000${m.name}\u0000${policy}`;
