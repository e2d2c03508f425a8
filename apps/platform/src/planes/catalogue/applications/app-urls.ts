/**
 * The extra hosts of an application (spec "Application" `urls[] {domain, subdomain}`; planes/run
 * README "Applications"): `{subdomain}.{domain}`, `{domain}`, or `{subdomain}.{platform domain}`.
 * The run gateway routes a request by its Host to the application claiming it, so a claim is
 * checked before it is stored:
 *  - never a host the platform itself answers on (its API/run hostnames, the bare domain, IP
 *    literals; an operator listening on 0.0.0.0 names its own host with TARMAC_PUBLIC_URL), nor one
 *    shaped like another kind's address (`sbx-…`/`app-…`/… labels, previews' `preview.` labels):
 *    400 naming the field;
 *  - one host, one application: a host another application claims — in any workspace — is 409
 *    naming the field; so is a domain (or a parent of it) that only other workspaces registered
 *    as a custom domain (planes/catalogue/custom-domains).
 */
import type { ApplicationSpecInput } from '@tarmac/contract';
import { ApiError, invalidField } from '@tarmac/server-kit';
import type { Store } from '@tarmac/store';
import { CUSTOM_DOMAIN_KIND } from '../../../framework/kinds.js';
import { APPLICATION_KIND } from '../../../framework/kinds.js';

type Url = ApplicationSpecInput['urls'][number];

/** First labels no application may claim under the platform's domain (§5.2 per-workload hosts). */
const RESERVED_LABEL = /^(sbx|app|agt|mcp|mdl|job)-/;

/** The hostname a `urls[]` entry names, lowercased; undefined for an empty entry. */
export function urlHostname(url: Url, platformDomain: string): string | undefined {
  const domain = url.domain?.toLowerCase().replace(/\.$/, '');
  if (domain) return url.subdomain ? `${url.subdomain}.${domain}` : domain;
  return url.subdomain ? `${url.subdomain}.${platformDomain.toLowerCase()}` : undefined;
}

/** Every host an application's `urls` claim (its stored spec; the run plane reads this too). */
export function claimedHostnames(urls: readonly Url[] | undefined, platformDomain: string): string[] {
  const out: string[] = [];
  for (const u of urls ?? []) {
    const host = urlHostname(u, platformDomain);
    if (host && !out.includes(host)) out.push(host);
  }
  return out;
}

const field = (i: number, url: Url) => `body.spec.urls.${i}.${url.domain ? 'domain' : 'subdomain'}`;

/** 400 for an entry naming nothing, the platform's own host, or another kind's address shape. */
export function checkUrls(
  urls: readonly Url[],
  platformDomain: string,
  ownHostnames: readonly string[],
): void {
  const domain = platformDomain.toLowerCase();
  urls.forEach((u, i) => {
    const host = urlHostname(u, domain);
    if (!host) throw invalidField(`body.spec.urls.${i}`, 'needs a domain or a subdomain');
    if (ownHostnames.includes(host) || host === domain) {
      throw invalidField(field(i, u), `${host} is the platform's own host`);
    }
    const labels = host.split('.');
    // An IP literal is how clients reach the platform itself when it has no name (no TLD is numeric).
    if (/^\d+$/.test(labels.at(-1)!)) {
      throw invalidField(field(i, u), `${host} is an IP address, not a domain`);
    }
    if (labels.includes('preview')) {
      throw invalidField(field(i, u), `${host} has a "preview" label: preview hosts belong to previews`);
    }
    if (host.endsWith(`.${domain}`) && RESERVED_LABEL.test(labels[0]!)) {
      throw invalidField(field(i, u), `${labels[0]} is reserved for the platform's own workload hosts`);
    }
  });
}

const taken = (field: string, message: string) =>
  new ApiError('conflict', `${field}: ${message}`, { details: [{ field, message }] });

/**
 * 409 when another application (any workspace) claims one of these hosts, or when the host's
 * domain is registered as a custom domain by other workspaces only.
 */
export async function assertHostsFree(
  store: Pick<Store, 'resources'>,
  workspace: string,
  name: string,
  urls: readonly Url[],
  platformDomain: string,
): Promise<void> {
  const claims = claimedHostnames(urls, platformDomain);
  if (claims.length === 0) return;
  const owners = new Map<string, string>();
  for (const row of await store.resources.listByKind<{ urls?: Url[] }>(APPLICATION_KIND)) {
    if (row.terminatedAt || (row.workspace === workspace && row.name === name)) continue;
    for (const host of claimedHostnames(row.spec.urls, platformDomain)) {
      if (!owners.has(host)) owners.set(host, `${row.workspace}/${row.name}`);
    }
  }
  const registered = new Map<string, Set<string>>();
  for (const d of await store.resources.listByKind(CUSTOM_DOMAIN_KIND)) {
    if (d.terminatedAt) continue;
    const set = registered.get(d.name.toLowerCase()) ?? new Set<string>();
    set.add(d.workspace);
    registered.set(d.name.toLowerCase(), set);
  }
  urls.forEach((u, i) => {
    const host = urlHostname(u, platformDomain);
    if (!host) return;
    const owner = owners.get(host);
    if (owner) {
      const who = owner.startsWith(`${workspace}/`)
        ? `application ${owner.split('/')[1]}`
        : 'another workspace';
      throw taken(field(i, u), `${host} is already claimed by ${who}`);
    }
    // A registered custom domain covers itself and its subdomains (Blaxel docs "Custom domains").
    const labels = host.split('.');
    for (let at = 0; at < labels.length - 1; at++) {
      const ws = registered.get(labels.slice(at).join('.'));
      if (ws && !ws.has(workspace)) {
        throw taken(field(i, u), `${host} is under a custom domain another workspace registered`);
      }
    }
  });
}
