/**
 * Which preview a request is addressed to, by its Host (ARCHITECTURE.md "Addresses"; spec "Sandbox
 * preview" `spec.url`):
 *  - platform domain: `<preview-id>.<region>.preview.<domain>` (the region label may be left out,
 *    as in the reference's `{preview_id}.preview.bl.run`);
 *  - custom domain: `<prefixUrl>.preview.<customDomain>` or `preview.<customDomain>`
 *    (resources/hosts.ts `customDomainUrl`).
 * Only the shape is checked here; whether such a preview exists is the route table's question.
 */
export type PreviewAddress = { kind: 'id'; previewId: string } | { kind: 'custom'; hostname: string };

const LABEL = /^[a-z0-9](?:[a-z0-9-]*[a-z0-9])?$/;

export function hostnameOf(host: string | undefined): string | undefined {
  if (!host) return undefined;
  // IPv6 literals never name a preview; strip a port from names only.
  if (host.startsWith('[')) return undefined;
  return host.replace(/:\d+$/, '').replace(/\.$/, '').toLowerCase();
}

export function previewAddress(host: string | undefined, domain: string): PreviewAddress | undefined {
  const hostname = hostnameOf(host);
  if (!hostname) return undefined;
  const suffix = `.preview.${domain.toLowerCase()}`;
  if (hostname.endsWith(suffix)) {
    const labels = hostname.slice(0, -suffix.length).split('.');
    // <id>.<region> or <id>; anything deeper is not a preview of ours.
    if (labels.length <= 2 && labels.every((l) => LABEL.test(l)) && !labels[0]!.startsWith('sbx-')) {
      return { kind: 'id', previewId: labels[0]! };
    }
    return undefined;
  }
  const labels = hostname.split('.');
  // preview.<custom.tld> or <prefix>.preview.<custom.tld>: at least a registrable domain after it.
  const at = labels[0] === 'preview' ? 0 : labels[1] === 'preview' ? 1 : -1;
  if (at < 0 || labels.length - at - 1 < 2 || !labels.every((l) => LABEL.test(l))) return undefined;
  return { kind: 'custom', hostname };
}

/** The Host key a custom-domain preview answers on. */
export function customHostname(customDomain: string, prefixUrl: string | undefined): string {
  return (prefixUrl ? `${prefixUrl}.preview.${customDomain}` : `preview.${customDomain}`).toLowerCase();
}
