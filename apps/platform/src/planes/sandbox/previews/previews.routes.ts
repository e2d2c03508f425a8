import { computeRoutes } from '@tarmac/contract';
import { mountRoute, principalOf, workspaceOf, type RouteDeps, type ServerEnv } from '@tarmac/server-kit';
import type { Hono } from 'hono';
import type { PreviewsService } from './previews.service.js';

/** Preview and preview-token routes (spec "Management API"; reference §1.6). */
export function registerPreviewRoutes(
  app: Hono<ServerEnv>,
  deps: RouteDeps,
  previews: PreviewsService,
): void {
  const r = computeRoutes;
  mountRoute(app, deps, r.listPreviews, async ({ ctx, params, page }) =>
    previews.list(workspaceOf(ctx), params.sandboxName, page),
  );
  mountRoute(app, deps, r.createPreview, async ({ ctx, params, query, body }) =>
    previews.create(workspaceOf(ctx), principalOf(ctx).id, params.sandboxName, body, query.force ?? false),
  );
  mountRoute(app, deps, r.getPreview, async ({ ctx, params }) =>
    previews.get(workspaceOf(ctx), params.sandboxName, params.previewName),
  );
  mountRoute(app, deps, r.updatePreview, async ({ ctx, params, query, body }) =>
    previews.update(
      workspaceOf(ctx),
      principalOf(ctx).id,
      params.sandboxName,
      params.previewName,
      body,
      query.force ?? false,
    ),
  );
  mountRoute(app, deps, r.deletePreview, async ({ ctx, params }) =>
    previews.delete(workspaceOf(ctx), params.sandboxName, params.previewName),
  );
  mountRoute(app, deps, r.listPreviewTokens, async ({ ctx, params, page }) =>
    previews.tokens.list(workspaceOf(ctx), params.sandboxName, params.previewName, page),
  );
  mountRoute(app, deps, r.createPreviewToken, async ({ ctx, params, body }) =>
    previews.tokens.create(
      workspaceOf(ctx),
      principalOf(ctx).id,
      params.sandboxName,
      params.previewName,
      body,
    ),
  );
  mountRoute(app, deps, r.deletePreviewToken, async ({ ctx, params }) =>
    previews.tokens.delete(workspaceOf(ctx), params.sandboxName, params.previewName, params.tokenName),
  );
}
