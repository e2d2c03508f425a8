/**
 * Part of the composition root (compose.ts): the model gateway (issue 18) with the catalogue's
 * model records in and usage out to metering — billing samples, then the per-call log behind
 * GET /v0/models/{name}/usage; both idempotent per call.
 */
import type { Store } from '@tarmac/store';
import type { Logger } from 'pino';
import type { PlatformConfig } from './config.js';
import { gatewayModelRecords } from './planes/catalogue/models/gateway-records.js';
import { modelCallLog } from './planes/metering/model-call-log.js';
import { modelUsageHistory, modelUsageSink } from './planes/metering/model-usage.js';
import { createModelGatewayPlane } from './planes/model-gateway/model-gateway-plane.js';
import type { SharedServices } from './shared-services.js';

export function composeModelGateway(d: {
  store: Store;
  shared: SharedServices;
  config: PlatformConfig;
  logger: Logger;
  selfPort: () => number | undefined;
}) {
  const { store, shared, config, logger } = d;
  const billedModelUsage = modelUsageSink(store);
  const modelCalls = modelCallLog(store, { retentionMs: config.models.callRetentionDays * 86_400_000 });
  return createModelGatewayPlane({
    catalogue: gatewayModelRecords(store, shared.secrets),
    changes: shared.changeFeed,
    authenticator: shared.authenticator,
    workspaces: shared.workspaces,
    usageSink: {
      record: async (calls) => {
        await billedModelUsage.record(calls);
        await modelCalls.record(calls);
      },
    },
    usageHistory: modelUsageHistory(store),
    upstream: config.models,
    selfPort: d.selfPort,
    onUsageError: (err) => logger.warn({ err }, 'model usage not recorded yet; retried with the next batch'),
    onCalls: (calls) => {
      if (logger.isLevelEnabled('debug')) logger.debug({ calls }, 'model gateway calls');
    },
  });
}
