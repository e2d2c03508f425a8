// The run plane's management routes (replica logs) for in-process HTTP tests: over the test's
// store, its controller never started (no engine here: tests/e2e/run runs replicas on the real
// engine). Engine calls fail with EngineUnavailableError, the way an engine that cannot answer does.
import { EngineUnavailableError } from '@tarmac/engine';
import type { Store } from '@tarmac/store';
import type { Logger } from 'pino';
import { ChangeFeed } from '../framework/change-feed.js';
import { DEFAULT_HOSTS } from '../framework/hosts.js';
import { SecretBox } from '../framework/secrets.js';
import { runRecords } from '../planes/catalogue/workloads/run-records.js';
import { BearerAuthenticator, MembershipWorkspaceResolver } from '../planes/identity/auth/authenticator.js';
import { JwtService, type SigningKey } from '../planes/identity/auth/jwt.js';
import { createRunPlane, type RunPlane } from '../planes/run/run-plane.js';

export function testRunPlane(
  store: Store,
  secretKey: Uint8Array,
  signingKey: SigningKey,
  logger: Logger,
): RunPlane {
  const noEngine = async (): Promise<never> => {
    throw new EngineUnavailableError('run plane', new Error('no engine in in-process HTTP tests'));
  };
  const feed = new ChangeFeed();
  return createRunPlane({
    catalogue: runRecords({
      store,
      feed,
      now: () => new Date(),
      secrets: new SecretBox(secretKey),
      hosts: DEFAULT_HOSTS,
      apiUrl: () => 'http://tarmac.test',
    }),
    engine: {
      createSandbox: noEngine,
      inspect: noEngine,
      stopSandbox: noEngine,
      deleteSandbox: noEngine,
      readLog: noEngine,
      list: noEngine,
      freeze: noEngine,
      endCpuBoost: () => undefined,
      thawSync: () => {
        throw new EngineUnavailableError('run plane', new Error('no engine in in-process HTTP tests'));
      },
    },
    setup: { defaults: noEngine, resolveImage: async (_workspace, ref) => ref },
    forwarder: { forward: noEngine, upgrade: noEngine },
    authenticator: new BearerAuthenticator(store, new JwtService(signingKey, 'tarmac')),
    workspaces: new MembershipWorkspaceResolver(store),
    changes: feed,
    home: '/nonexistent',
    logger,
    readyTimeoutMs: 1000,
    startupCpuCores: 0,
    holdMs: 1000,
    maxHeld: 10,
    domain: DEFAULT_HOSTS.domain,
    idle: { standbyAfterMs: 0, stopAfterMs: 0 },
  });
}
