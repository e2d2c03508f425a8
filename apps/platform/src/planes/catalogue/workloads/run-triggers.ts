/**
 * The triggers of an agent or function as the run plane serves them (issue 16; reference
 * control-plane.md §2.5 `Trigger`, §5.2 custom trigger paths, §5.3 async requests): enabled
 * `http` and `http-async` ones, without their callback secret (it stays sealed in the record and
 * is opened by run-records.ts `callbackSecret` only to sign a callback).
 */
import type { TriggerLike } from './workload-secrets.js';

export interface RunTriggerView {
  id: string;
  type: 'http' | 'http-async';
  path: string | undefined;
  public: boolean;
  callbackUrl: string | undefined;
  retry: number | undefined;
  timeoutSeconds: number | undefined;
}

interface StoredTrigger extends TriggerLike {
  enabled?: boolean;
  configuration: TriggerLike['configuration'] & {
    path?: string;
    authenticationType?: string;
    retry?: number;
    timeout?: number;
  };
}

export function runTriggersOf(triggers: readonly StoredTrigger[] | undefined): RunTriggerView[] {
  const out: RunTriggerView[] = [];
  for (const [index, t] of (triggers ?? []).entries()) {
    if (t.enabled === false || (t.type !== 'http' && t.type !== 'http-async')) continue;
    const c = t.configuration;
    out.push({
      id: t.id ?? `${t.type}-${index}`,
      type: t.type,
      path: c.path,
      public: c.authenticationType === 'public',
      callbackUrl: c.callbackUrl,
      retry: c.retry,
      timeoutSeconds: c.timeout,
    });
  }
  return out;
}
