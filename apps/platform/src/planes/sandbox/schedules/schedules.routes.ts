import { scheduleRoutes as r } from '@tarmac/contract';
import { mountRoute, principalOf, workspaceOf, type RouteDeps, type ServerEnv } from '@tarmac/server-kit';
import type { Hono } from 'hono';
import type { SchedulesService } from './schedules.service.js';

/** Sandbox schedule routes (reference control-plane §1.6 "Schedules"). */
export function registerScheduleRoutes(app: Hono<ServerEnv>, deps: RouteDeps, schedules: SchedulesService) {
  mountRoute(app, deps, r.listSchedules, async ({ ctx, params, query, page }) =>
    schedules.list(workspaceOf(ctx), params.sandboxName, page, query.type),
  );
  mountRoute(app, deps, r.createSchedule, async ({ ctx, params, body }) =>
    schedules.create(workspaceOf(ctx), principalOf(ctx).id, params.sandboxName, body),
  );
  mountRoute(app, deps, r.getSchedule, async ({ ctx, params }) =>
    schedules.get(workspaceOf(ctx), params.sandboxName, params.scheduleId),
  );
  mountRoute(app, deps, r.updateSchedule, async ({ ctx, params, body }) =>
    schedules.update(workspaceOf(ctx), principalOf(ctx).id, params.sandboxName, params.scheduleId, body),
  );
  mountRoute(app, deps, r.deleteSchedule, async ({ ctx, params }) =>
    schedules.delete(workspaceOf(ctx), params.sandboxName, params.scheduleId),
  );
  mountRoute(app, deps, r.listScheduleExecutions, async ({ ctx, params, page }) =>
    schedules.listExecutions(workspaceOf(ctx), params.sandboxName, page),
  );
}
