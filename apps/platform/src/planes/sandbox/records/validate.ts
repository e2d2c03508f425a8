// Create/update-time validation of `spec.network` for the sandboxes module (brief: "anything not
// supported answers 400 at create time rather than being ignored silently"). Returns one issue per
// problem, each naming its field, so the caller can raise its 400 with the first (or all) of them.
import { patternProblem } from './domain-pattern.js';
import { readNetworkSettings, ROOT, type Issue, type NetworkSettings } from './network-settings.js';
import { referencedSecrets } from './secret-template.js';

export type { Issue } from './network-settings.js';

/** `firewall.rulesets` this engine honours: egress only through the platform's proxy. */
export const SUPPORTED_RULESETS = ['default', 'proxy'] as const;
/** `egress.policies[].mode` values, mapped onto the domain lists (policy.ts). */
export const SUPPORTED_POLICY_MODES = ['allow', 'deny'] as const;

const HEADER_NAME = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
/** Headers the proxy computes itself; a rule setting them would corrupt the request framing. */
const RESERVED_HEADERS = new Set([
  'host',
  'content-length',
  'transfer-encoding',
  'connection',
  'upgrade',
  'te',
  'trailer',
  'keep-alive',
  'proxy-connection',
]);

function patterns(issues: Issue[], list: readonly string[], path: string): void {
  list.forEach((p, i) => {
    const problem = patternProblem(p);
    if (problem) issues.push({ path: `${path}[${i}]`, message: `domain pattern "${p}" ${problem}` });
  });
}

function routing(issues: Issue[], settings: NetworkSettings): void {
  settings.proxy.routing.forEach((rule, i) => {
    const path = `${ROOT}.proxy.routing[${i}]`;
    if (rule.destinations.length === 0) {
      issues.push({ path: `${path}.destinations`, message: 'must list at least one domain' });
    }
    patterns(issues, rule.destinations, `${path}.destinations`);
    const used: { name: string; where: string }[] = [];
    for (const [name, value] of Object.entries(rule.headers)) {
      if (!HEADER_NAME.test(name)) {
        issues.push({ path: `${path}.headers`, message: `"${name}" is not a valid HTTP header name` });
      } else if (RESERVED_HEADERS.has(name.toLowerCase())) {
        issues.push({
          path: `${path}.headers.${name}`,
          message: `"${name}" is set by the proxy and cannot be injected`,
        });
      }
      if (/[\r\n\0]/.test(value)) {
        issues.push({ path: `${path}.headers.${name}`, message: 'must not contain line breaks or NUL' });
      }
      used.push(...referencedSecrets(value).map((s) => ({ name: s, where: `${path}.headers.${name}` })));
    }
    if (rule.body !== undefined) {
      used.push(...referencedSecrets(rule.body).map((s) => ({ name: s, where: `${path}.body` })));
    }
    for (const { name, where } of used) {
      if (!(name in rule.secrets)) {
        issues.push({
          path: where,
          message: `references {{SECRET:${name}}} but ${path}.secrets has no "${name}"`,
        });
      }
    }
    for (const [name, value] of Object.entries(rule.secrets)) {
      if (
        /[\r\n\0]/.test(value) &&
        Object.values(rule.headers).some((h) => h.includes(`{{SECRET:${name}}}`))
      ) {
        issues.push({
          path: `${path}.secrets.${name}`,
          message: 'is used in a header and must not contain line breaks or NUL',
        });
      }
    }
  });
}

/** Every problem of `spec.network` (empty when it can be applied as written). */
export function validateNetworkSpec(network: unknown): Issue[] {
  if (network === undefined || network === null) return [];
  const { settings, issues } = readNetworkSettings(network);
  patterns(issues, settings.allowedDomains, `${ROOT}.allowedDomains`);
  patterns(issues, settings.forbiddenDomains, `${ROOT}.forbiddenDomains`);
  patterns(issues, settings.proxy.allowedDomains, `${ROOT}.proxy.allowedDomains`);
  patterns(issues, settings.proxy.forbiddenDomains, `${ROOT}.proxy.forbiddenDomains`);
  patterns(issues, settings.proxy.bypass, `${ROOT}.proxy.bypass`);
  routing(issues, settings);
  // One machine has one network: no subnets, VPC gateways or dedicated egress IPs to choose from.
  if (settings.subnet !== undefined && settings.subnet !== '' && settings.subnet !== 'default') {
    issues.push({
      path: `${ROOT}.subnet`,
      message: `subnet "${settings.subnet}" does not exist; this platform has only "default"`,
    });
  }
  settings.rulesets.forEach((r, i) => {
    if (!(SUPPORTED_RULESETS as readonly string[]).includes(r)) {
      issues.push({
        path: `${ROOT}.firewall.rulesets[${i}]`,
        message: `ruleset "${r}" is not supported here; supported: ${SUPPORTED_RULESETS.join(', ')} (egress only through the platform proxy)`,
      });
    }
  });
  if (settings.egress.gateway) {
    issues.push({
      path: `${ROOT}.egress.gateway`,
      message: `egress gateway "${settings.egress.gateway}" does not exist; this platform has no egress gateways (all egress leaves through the platform proxy)`,
    });
  }
  if (settings.egress.mode) {
    issues.push({
      path: `${ROOT}.egress.mode`,
      message: `egress mode "${settings.egress.mode}" is not supported; this platform has no dedicated egress IPs`,
    });
  }
  settings.egress.policies.forEach((p, i) => {
    const path = `${ROOT}.egress.policies[${i}]`;
    if (!p.name) issues.push({ path: `${path}.name`, message: 'is required' });
    if (!(SUPPORTED_POLICY_MODES as readonly string[]).includes(p.mode)) {
      issues.push({
        path: `${path}.mode`,
        message: `mode "${p.mode}" is not supported; supported: ${SUPPORTED_POLICY_MODES.join(', ')}`,
      });
    }
    if (p.destinations.length === 0)
      issues.push({ path: `${path}.destinations`, message: 'must list at least one domain' });
    patterns(issues, p.destinations, `${path}.destinations`);
  });
  return issues;
}
