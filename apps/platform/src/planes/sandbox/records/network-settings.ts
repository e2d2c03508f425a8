// Reads `spec.network` (spec "Sandbox" → `spec.network`) into one normalized shape that the
// validator and the proxy policy share. The spec leaves the exact wire type of the list and map
// fields open ("shown as JSON text inside strings"), so each list may arrive as a JSON array or as
// a string holding one, each map as an object or a string holding one, and `body` as JSON text or
// as an object (the reference SDK sends an object). Anything else becomes an issue naming the field.

export interface Issue {
  /** Dotted path below the sandbox, e.g. `spec.network.proxy.routing[0].headers`. */
  path: string;
  message: string;
}

export interface RoutingRule {
  destinations: string[];
  headers: Record<string, string>;
  /** JSON text of an object whose fields are merged into (or become) the request body. */
  body: string | undefined;
  secrets: Record<string, string>;
}

export interface EgressPolicyEntry {
  name: string;
  mode: string;
  destinations: string[];
}

export interface NetworkSettings {
  allowedDomains: string[];
  forbiddenDomains: string[];
  subnet: string | undefined;
  rulesets: string[];
  egress: { gateway: string | undefined; mode: string | undefined; policies: EgressPolicyEntry[] };
  proxy: { allowedDomains: string[]; forbiddenDomains: string[]; bypass: string[]; routing: RoutingRule[] };
}

export const ROOT = 'spec.network';

type Obj = Record<string, unknown>;

function isObj(v: unknown): v is Obj {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Accepts the value itself or JSON text of it. */
function unwrapJsonText(v: unknown): unknown {
  if (typeof v !== 'string') return v;
  const t = v.trim();
  if (!t.startsWith('[') && !t.startsWith('{')) return v;
  try {
    return JSON.parse(t) as unknown;
  } catch {
    return v;
  }
}

class Reader {
  readonly issues: Issue[] = [];

  issue(path: string, message: string): void {
    this.issues.push({ path, message });
  }

  stringList(v: unknown, path: string): string[] {
    if (v === undefined || v === null) return [];
    const u = unwrapJsonText(v);
    if (!Array.isArray(u)) {
      this.issue(path, 'must be a list of strings (a JSON array, or JSON text of one)');
      return [];
    }
    const out: string[] = [];
    u.forEach((item, i) => {
      if (typeof item === 'string') out.push(item);
      else this.issue(`${path}[${i}]`, 'must be a string');
    });
    return out;
  }

  stringMap(v: unknown, path: string): Record<string, string> {
    if (v === undefined || v === null) return {};
    const u = unwrapJsonText(v);
    if (!isObj(u)) {
      this.issue(path, 'must be a map of strings (a JSON object, or JSON text of one)');
      return {};
    }
    const out: Record<string, string> = {};
    for (const [k, val] of Object.entries(u)) {
      if (typeof val === 'string') out[k] = val;
      else this.issue(`${path}.${k}`, 'must be a string');
    }
    return out;
  }

  optionalString(v: unknown, path: string): string | undefined {
    if (v === undefined || v === null) return undefined;
    if (typeof v === 'string') return v;
    this.issue(path, 'must be a string');
    return undefined;
  }

  object(v: unknown, path: string): Obj {
    if (v === undefined || v === null) return {};
    const u = unwrapJsonText(v);
    if (isObj(u)) return u;
    this.issue(path, 'must be an object');
    return {};
  }

  list(v: unknown, path: string): unknown[] {
    if (v === undefined || v === null) return [];
    const u = unwrapJsonText(v);
    if (Array.isArray(u)) return u;
    this.issue(path, 'must be a list');
    return [];
  }

  body(v: unknown, path: string): string | undefined {
    if (v === undefined || v === null || v === '') return undefined;
    if (isObj(v)) return JSON.stringify(v);
    if (typeof v !== 'string') {
      this.issue(path, 'must be JSON text of an object');
      return undefined;
    }
    try {
      if (isObj(JSON.parse(v))) return v;
    } catch {
      // falls through to the issue below
    }
    this.issue(path, 'must be JSON text of an object');
    return undefined;
  }
}

/** Normalizes `spec.network`; `issues` lists every field of the wrong type. */
export function readNetworkSettings(raw: unknown): { settings: NetworkSettings; issues: Issue[] } {
  const r = new Reader();
  const n = r.object(raw, ROOT);
  const firewall = r.object(n.firewall, `${ROOT}.firewall`);
  const egress = r.object(n.egress, `${ROOT}.egress`);
  const proxy = r.object(n.proxy, `${ROOT}.proxy`);
  const settings: NetworkSettings = {
    allowedDomains: r.stringList(n.allowedDomains, `${ROOT}.allowedDomains`),
    forbiddenDomains: r.stringList(n.forbiddenDomains, `${ROOT}.forbiddenDomains`),
    subnet: r.optionalString(n.subnet, `${ROOT}.subnet`),
    rulesets: r.stringList(firewall.rulesets, `${ROOT}.firewall.rulesets`),
    egress: {
      gateway: r.optionalString(egress.gateway, `${ROOT}.egress.gateway`),
      mode: r.optionalString(egress.mode, `${ROOT}.egress.mode`),
      policies: r.list(egress.policies, `${ROOT}.egress.policies`).map((p, i) => {
        const path = `${ROOT}.egress.policies[${i}]`;
        const o = r.object(p, path);
        return {
          name: r.optionalString(o.name, `${path}.name`) ?? '',
          mode: r.optionalString(o.mode, `${path}.mode`) ?? '',
          destinations: r.stringList(o.destinations, `${path}.destinations`),
        };
      }),
    },
    proxy: {
      allowedDomains: r.stringList(proxy.allowedDomains, `${ROOT}.proxy.allowedDomains`),
      forbiddenDomains: r.stringList(proxy.forbiddenDomains, `${ROOT}.proxy.forbiddenDomains`),
      bypass: r.stringList(proxy.bypass, `${ROOT}.proxy.bypass`),
      routing: r.list(proxy.routing, `${ROOT}.proxy.routing`).map((rule, i) => {
        const path = `${ROOT}.proxy.routing[${i}]`;
        const o = r.object(rule, path);
        return {
          destinations: r.stringList(o.destinations, `${path}.destinations`),
          headers: r.stringMap(o.headers, `${path}.headers`),
          body: r.body(o.body, `${path}.body`),
          secrets: r.stringMap(o.secrets, `${path}.secrets`),
        };
      }),
    },
  };
  return { settings, issues: r.issues };
}
