import type { RouteSpec } from '@tarmac/contract';

/** Query values the SDK serialises: arrays become comma lists (`status=DEPLOYED,FAILED`). */
export type QueryValue = string | number | boolean | readonly (string | number)[] | null | undefined;

export function queryString(query: Record<string, QueryValue> | undefined): string {
  if (!query) return '';
  const search = new URLSearchParams();
  for (const [key, value] of Object.entries(query)) {
    if (value === undefined || value === null) continue;
    search.set(key, Array.isArray(value) ? value.join(',') : String(value));
  }
  const text = search.toString();
  return text ? `?${text}` : '';
}

/** Fills `{name}` placeholders; each value is percent-encoded so a name can never add segments. */
export function fillPath(path: string, params: Record<string, unknown> | undefined): string {
  return path.replace(/\{(\w+)\}/g, (_, key: string) => {
    const value = params?.[key];
    if (value === undefined || value === null || value === '') {
      throw new TypeError(`missing path parameter "${key}" for ${path}`);
    }
    return encodeURIComponent(String(value));
  });
}

export function routeUrl(
  baseUrl: string,
  route: Pick<RouteSpec, 'path'>,
  params?: Record<string, unknown>,
  query?: Record<string, QueryValue>,
): string {
  return `${baseUrl}${fillPath(route.path, params)}${queryString(query)}`;
}
