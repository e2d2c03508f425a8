// `proxy.routing[].headers` and `.body` applied to one outgoing request (spec "Sandbox" →
// `spec.network`, `{{SECRET:<name>}}` tokens). Secrets are rendered into parsed JSON string values,
// never spliced into JSON text, so a secret holding quotes cannot break the body.
import { renderSecrets } from '../records/secret-template.js';
import type { RoutingRule } from '../records/network-settings.js';

export type Headers = Record<string, string | string[] | undefined>;

/** Rule headers replace same-named request headers (case-insensitive). */
export function injectHeaders(headers: Headers, rule: RoutingRule): Headers {
  const out: Headers = { ...headers };
  for (const [name, template] of Object.entries(rule.headers)) {
    for (const existing of Object.keys(out)) {
      if (existing.toLowerCase() === name.toLowerCase()) delete out[existing];
    }
    out[name.toLowerCase()] = renderSecrets(template, rule.secrets);
  }
  return out;
}

function renderDeep(value: unknown, secrets: Readonly<Record<string, string>>): unknown {
  if (typeof value === 'string') return renderSecrets(value, secrets);
  if (Array.isArray(value)) return value.map((v) => renderDeep(v, secrets));
  if (typeof value === 'object' && value !== null) {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, renderDeep(v, secrets)]));
  }
  return value;
}

function parseObject(text: string): Record<string, unknown> | undefined {
  try {
    const v: unknown = JSON.parse(text);
    return typeof v === 'object' && v !== null && !Array.isArray(v)
      ? (v as Record<string, unknown>)
      : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The body to send, or undefined to send the request's own body unchanged. The rule's fields are
 * merged over a JSON-object body; an empty body (on methods that carry one) becomes the rule's
 * JSON; any other body is replaced by it. GET and HEAD without a body stay without one.
 */
export function injectBody(method: string, original: Buffer, rule: RoutingRule): Buffer | undefined {
  if (rule.body === undefined) return undefined;
  if (original.length === 0 && (method === 'GET' || method === 'HEAD')) return undefined;
  const fields = renderDeep(JSON.parse(rule.body), rule.secrets) as Record<string, unknown>;
  const base = original.length > 0 ? parseObject(original.toString('utf8')) : undefined;
  return Buffer.from(JSON.stringify(base ? { ...base, ...fields } : fields));
}
