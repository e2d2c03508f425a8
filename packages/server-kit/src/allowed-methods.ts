import { TrieRouter } from 'hono/router/trie-router';

/**
 * The methods an app serves for a path, read from its mounted route table (not a hand-kept
 * list), so a wrong method on a known path can answer 405 with `Allow` (RFC 9110 §15.5.6)
 * instead of 404. Middleware and `all` handlers are left out: they name no method.
 */
export function allowedMethodsOf(app: {
  readonly routes: readonly { method: string; path: string }[];
}): (path: string) => string[] {
  let built: { size: number; router: TrieRouter<true>; methods: string[] } | undefined;
  const index = () => {
    // Routes can be mounted after the app is created; rebuild when the table has grown.
    if (built?.size === app.routes.length) return built;
    const router = new TrieRouter<true>();
    const methods = new Set<string>();
    for (const route of app.routes) {
      if (route.method === 'ALL') continue;
      router.add(route.method, route.path, true);
      methods.add(route.method);
    }
    built = { size: app.routes.length, router, methods: [...methods] };
    return built;
  };
  return (path) => {
    const { router, methods } = index();
    const allowed = methods.filter((method) => router.match(method, path)[0].length > 0);
    // HEAD is served by every GET route (Hono answers it from the GET handler).
    if (allowed.includes('GET') && !allowed.includes('HEAD')) allowed.push('HEAD');
    return allowed.sort();
  };
}
