/**
 * Composition of the sandbox plane for main.ts: the local engine, the sandbox/volume controllers
 * and the gateway in front of sandboxd. Takes everything it needs as arguments (main.ts reads the
 * environment and files); nothing runs until `start`.
 */
import { join } from 'node:path';
import type { SandboxSpec } from '@tarmac/contract';
import { ImageNotFoundError, LocalEngine } from '@tarmac/engine';
import type { Store } from '@tarmac/store';
import type { Logger } from 'pino';
import { startControllers, type ControllerDeps, type Controllers } from '../controllers/controllers.js';
import type { EngineConfig } from '../controllers/engine-config.js';
import type { SandboxRow } from '../controllers/sandbox-record.js';
import { BearerAuthenticator, MembershipWorkspaceResolver } from '../modules/identity/authenticator.js';
import type { JwtService } from '../modules/identity/jwt.js';
import { sandboxSecretContext, viewSandboxSpec } from '../modules/sandboxes/sandbox-secrets.js';
import { SecretBox } from '../resources/secrets.js';
import type { ChangeFeed } from '../shared/change-feed.js';
import { imageImportApp } from './image-import.js';
import { PreviewGateway } from './previews/preview-gateway.js';
import type { RawRoute } from './listener.js';
import { SandboxGateway, type SandboxGatewayDeps } from './sandbox-gateway.js';

export interface SandboxPlaneDeps {
  home: string;
  config: EngineConfig;
  /** Absolute path of the sandboxd bundle (main.ts resolves the default). */
  sandboxdBundle: string;
  nodeBinary: string;
  store: Store;
  changes: ChangeFeed;
  logger: Logger;
  jwt: JwtService;
  /** Key of the resources' SecretBox (keys/secrets.key): secret envs are opened at start. */
  secretsKey: Uint8Array;
  /** Egress env vars and CA files every sandbox gets (egress/sandbox-setup.ts). */
  sandboxDefaults?: ControllerDeps['sandboxDefaults'];
  /** Sandbox API routes the platform answers itself (SandboxGatewayDeps.intercept). */
  gatewayIntercept?: SandboxGatewayDeps['intercept'];
}

export interface SandboxPlane {
  engine: LocalEngine;
  controllers: Controllers;
  gateway: SandboxGateway;
  /** Serves preview hosts (previews/preview-gateway.ts). */
  previews: PreviewGateway;
  /** Raw-body management routes served at the listener (POST /v0/images/import). */
  rawRoutes: RawRoute[];
  /** For the sandboxes module: false for an image the engine does not have (400 INVALID_IMAGE). */
  validateImage(ref: string): Promise<boolean>;
  stop(): Promise<void>;
}

export function startSandboxPlane(d: SandboxPlaneDeps): SandboxPlane {
  const engine = new LocalEngine({
    home: d.home,
    ...(d.config.imageDir ? { imageDir: d.config.imageDir } : {}),
    network: d.config.network,
    runtime: { nodeBinary: d.nodeBinary, tiniBinary: d.config.tiniBinary, sandboxdBundle: d.sandboxdBundle },
    ...d.config.limits,
  });
  const box = new SecretBox(d.secretsKey);
  const controllers = startControllers({
    engine,
    store: d.store,
    changes: d.changes,
    logger: d.logger,
    standbyAfterMs: d.config.standbyAfterMs,
    ...(d.sandboxDefaults ? { sandboxDefaults: d.sandboxDefaults } : {}),
    revealEnvs: (row: SandboxRow) =>
      viewSandboxSpec(box, row.spec as SandboxSpec, sandboxSecretContext(row.workspace, row.name), 'reveal')
        .runtime?.envs ?? [],
  });
  const authenticator = new BearerAuthenticator(d.store, d.jwt);
  const workspaces = new MembershipWorkspaceResolver(d.store);
  const gateway = new SandboxGateway({
    live: controllers.live,
    touch: (entry) => controllers.standby.touch(entry),
    authenticator,
    workspaces,
    store: d.store,
    logger: d.logger,
    ready: controllers.ready,
    domain: d.config.sandboxDomain,
    ...(d.gatewayIntercept ? { intercept: d.gatewayIntercept } : {}),
  });
  const previews = new PreviewGateway({
    live: controllers.live,
    touch: (entry) => controllers.standby.touch(entry),
    store: d.store,
    changes: d.changes,
    logger: d.logger,
    ready: controllers.ready,
    domain: d.config.sandboxDomain,
    ...(d.gatewayIntercept ? { intercept: d.gatewayIntercept } : {}),
  });
  const imageImport = imageImportApp({
    engine,
    authenticator,
    workspaces,
    logger: d.logger,
    spoolDir: join(d.home, 'images-spool'),
  });
  return {
    engine,
    controllers,
    gateway,
    previews,
    rawRoutes: [imageImport],
    async validateImage(ref) {
      try {
        await engine.ensureImage(ref); // builds tarmac/base on first use; unknown refs throw
        return true;
      } catch (err) {
        if (err instanceof ImageNotFoundError) return false;
        throw err;
      }
    },
    async stop() {
      gateway.close();
      previews.close();
      await controllers.stop();
    },
  };
}
