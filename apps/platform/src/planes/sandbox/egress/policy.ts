// What the egress proxy does with one destination host, from a sandbox's `spec.network`
// (spec "Sandbox" → `spec.network`; ARCHITECTURE.md beside this file, "Decision order").
import { firstMatch, normalizeHost } from '../records/domain-pattern.js';
import type { NetworkSettings, RoutingRule } from '../records/network-settings.js';

interface NamedPattern {
  pattern: string;
  /** The field the pattern came from, for refusal messages that name the rule. */
  field: string;
}

export interface EgressPolicy {
  /** Which sandbox, for logs and messages. */
  sandbox: string;
  /** False after DELETE /network/tunnel: every destination is refused. */
  connected: boolean;
  allowed: NamedPattern[];
  forbidden: NamedPattern[];
  bypass: string[];
  routing: RoutingRule[];
}

export type Decision =
  | { kind: 'deny'; reason: string }
  /** Connect through without looking inside (no interception). */
  | { kind: 'pass' }
  /** Look inside HTTP(S) and apply the routing rule. */
  | { kind: 'route'; rule: RoutingRule };

const named = (patterns: readonly string[], field: string): NamedPattern[] =>
  patterns.map((pattern) => ({ pattern, field }));

/**
 * Compiles normalized settings. Top-level and `proxy` domain lists are unions (the reference marks
 * the top-level ones deprecated in favour of `proxy.*`, so both must keep working); `egress.policies`
 * with mode `allow` / `deny` add to them (validate.ts refuses every other mode).
 */
export function compilePolicy(
  sandbox: string,
  settings: NetworkSettings,
  options: { connected?: boolean } = {},
): EgressPolicy {
  const allowed = [
    ...named(settings.allowedDomains, 'allowedDomains'),
    ...named(settings.proxy.allowedDomains, 'proxy.allowedDomains'),
  ];
  const forbidden = [
    ...named(settings.forbiddenDomains, 'forbiddenDomains'),
    ...named(settings.proxy.forbiddenDomains, 'proxy.forbiddenDomains'),
  ];
  for (const p of settings.egress.policies) {
    const field = `egress.policies "${p.name}"`;
    if (p.mode === 'allow') allowed.push(...named(p.destinations, field));
    if (p.mode === 'deny') forbidden.push(...named(p.destinations, field));
  }
  return {
    sandbox,
    connected: options.connected ?? true,
    allowed,
    forbidden,
    bypass: settings.proxy.bypass,
    routing: settings.proxy.routing,
  };
}

function matchNamed(host: string, list: readonly NamedPattern[]): NamedPattern | undefined {
  return list.find((n) => firstMatch(host, [n.pattern]) !== undefined);
}

/**
 * Order: disconnected tunnel → forbidden (forbidden always wins) → allow list (when any allow
 * pattern exists, a host must match one, or be a routing destination) → bypass (no interception)
 * → routing rule (intercept and inject) → pass.
 */
export function decide(policy: EgressPolicy, rawHost: string): Decision {
  const host = normalizeHost(rawHost);
  if (!policy.connected) {
    return {
      kind: 'deny',
      reason: `egress of sandbox "${policy.sandbox}" is disconnected (DELETE /network/tunnel); PUT /network/tunnel/config restores it`,
    };
  }
  const forbidden = matchNamed(host, policy.forbidden);
  if (forbidden) {
    return { kind: 'deny', reason: `"${host}" is refused by ${forbidden.field} rule "${forbidden.pattern}"` };
  }
  const rule = policy.routing.find((r) => firstMatch(host, r.destinations) !== undefined);
  if (policy.allowed.length > 0 && !rule && !matchNamed(host, policy.allowed)) {
    const fields = [...new Set(policy.allowed.map((a) => a.field))].join(', ');
    return { kind: 'deny', reason: `"${host}" is not in the allow list (${fields})` };
  }
  if (firstMatch(host, policy.bypass) !== undefined) return { kind: 'pass' };
  return rule ? { kind: 'route', rule } : { kind: 'pass' };
}
