import { templateRoutes } from '@tarmac/contract';
import { mountRoute, notFound, type RouteDeps, type ServerEnv } from '@tarmac/server-kit';
import type { Hono } from 'hono';
import { TEMPLATES } from './catalogue.js';

/** `GET /v0/templates[/{name}]`: the read-only built-in catalogue (reference §1.10). */
export function registerTemplateRoutes(app: Hono<ServerEnv>, deps: RouteDeps): void {
  mountRoute(app, deps, templateRoutes.list, async () => TEMPLATES.map((t) => structuredClone(t)));
  mountRoute(app, deps, templateRoutes.get, async ({ params }) => {
    const found = TEMPLATES.find((t) => t.name === params.templateName);
    if (!found) throw notFound(`Template "${params.templateName}"`);
    return structuredClone(found);
  });
}
