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
import { namespaceLegacyImages } from '../modules/images/legacy-images.js';
import { WorkspaceImages } from '../modules/images/workspace-images.js';
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
  /** For the sandboxes module: false for an image the workspace cannot run (400 INVALID_IMAGE). */
  validateImage(ref: string, workspace: string): Promise<boolean>;
  stop(): Promise<void>;
}

export async function startSandboxPlane(d: SandboxPlaneDeps): Promise<SandboxPlane> {
  const engine = new LocalEngine({
    home: d.home,
    ...(d.config.imageDir ? { imageDir: d.config.imageDir } : {}),
    network: d.config.network,
    ...(d.config.maxImageArchiveBytes
      ? { importLimits: { maxArchiveBytes: d.config.maxImageArchiveBytes } }
      : {}),
    runtime: { nodeBinary: d.nodeBinary, tiniBinary: d.config.tiniBinary, sandboxdBundle: d.sandboxdBundle },
  });
  // Images are per workspace (issue 19 item 2). Before the controllers start, images of an older
  // layout move into their workspace's namespace; a store shared by several homes is not ours to sort.
  const images = new WorkspaceImages(d.store);
  if (!d.config.imageDir) await namespaceLegacyImages(engine.images, d.store, d.logger);
  const box = new SecretBox(d.secretsKey);
  const controllers = startControllers({
    engine,
    store: d.store,
    changes: d.changes,
    logger: d.logger,
    standbyAfterMs: d.config.standbyAfterMs,
    resolveImage: (workspace, ref) => images.resolve(workspace, ref),
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
    images,
    ...(d.config.maxImageArchiveBytes ? { maxArchiveBytes: d.config.maxImageArchiveBytes } : {}),
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
    async validateImage(ref, workspace) {
      const engineRef = await images.resolve(workspace, ref);
      if (engineRef === undefined) return false;
      try {
        await engine.ensureImage(engineRef); // builds tarmac/base on first use; unknown refs throw
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
