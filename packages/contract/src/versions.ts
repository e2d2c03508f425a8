/**
 * API versioning (spec "Versioning"): `Service-Version: YYYY-MM-DD` or `YYYY-MM-DD.preview`; absent
 * means the earliest stable version; anything unknown is a 400 `invalid_api_version`.
 */
export const API_VERSIONS = ['2026-04-16', '2026-04-20', '2026-04-28'] as const;
export type ApiVersion = (typeof API_VERSIONS)[number];
export const DEFAULT_API_VERSION: ApiVersion = '2026-04-16';
/** First version whose management lists carry the `{data, meta}` envelope (spec "Pagination"). */
export const PAGINATION_SINCE: ApiVersion = '2026-04-28';
export const VERSION_HEADER = 'Service-Version';

const VERSION_FORMAT = /^(\d{4})-(\d{2})-(\d{2})(\.preview)?$/;

export type VersionResolution = { ok: true; version: ApiVersion } | { ok: false; message: string };

/** Resolves the requested version; `undefined` or an empty header means the default version. */
export function resolveApiVersion(requested: string | undefined): VersionResolution {
  const raw = requested?.trim();
  if (!raw) return { ok: true, version: DEFAULT_API_VERSION };
  const valid = `Valid versions: ${API_VERSIONS.join(', ')}.`;
  if (!VERSION_FORMAT.test(raw)) {
    return {
      ok: false,
      message: `Unknown API version "${raw}": expected YYYY-MM-DD or YYYY-MM-DD.preview. ${valid}`,
    };
  }
  if (!(API_VERSIONS as readonly string[]).includes(raw)) {
    return { ok: false, message: `Unknown API version "${raw}". ${valid}` };
  }
  return { ok: true, version: raw as ApiVersion };
}

export function versionAtLeast(version: ApiVersion, minimum: ApiVersion): boolean {
  return version >= minimum; // ISO dates compare lexically
}
