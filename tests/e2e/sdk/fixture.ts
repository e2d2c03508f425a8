// Platform fixture of the SDK and CLI end-to-end files. Every platform runs the sandbox engine, so
// each file gets its own bridge and subnet (files never collide, nor touch a developer's running
// platform), the shared base-image cache (no image build per home), and a teardown that deletes
// every sandbox and waits until the engine has terminated it: a stopped platform deliberately
// leaves sandboxes running, so without this they would outlive the test.
import { Sandbox, Tarmac } from '@tarmac/sdk';
import { IMAGE_CACHE, engineIds, hostLeftovers, missingCapability } from '../sandboxes/support.js';
import { removeHome, startPlatform, type RunningPlatform, type StartOptions } from '../support/platform.js';

export interface TestNetwork {
  /** At most 15 characters (a Linux interface name). */
  bridge: string;
  /** An unused /16, e.g. 10.240.0.0/16. */
  subnet: string;
}

export function startTestPlatform(
  network: TestNetwork,
  options: StartOptions = {},
): Promise<RunningPlatform> {
  return startPlatform({
    timeoutMs: 15 * 60_000, // a machine's very first run builds the base image into the cache
    ...options,
    env: {
      TARMAC_IMAGE_DIR: IMAGE_CACHE,
      TARMAC_BRIDGE: network.bridge,
      TARMAC_SUBNET: network.subnet,
      ...options.env,
    },
  });
}

/** Deletes every sandbox, waits until none is left, stops the platform, removes its home. */
export async function stopTestPlatform(
  platform: Pick<RunningPlatform, 'credentials' | 'home' | 'stop'> | undefined,
): Promise<string[]> {
  if (!platform) return [];
  const { apiUrl, apiKey } = platform.credentials;
  const ids = engineIds(platform.home);
  const deadline = Date.now() + 90_000;
  for (const workspace of await new Tarmac({ apiUrl, apiKey }).workspaces.list().all()) {
    const client = new Tarmac({ apiUrl, apiKey, workspace: workspace.name });
    for (const sandbox of await client.sandboxes.list().all()) {
      await Sandbox.delete(sandbox.name, client).catch(() => undefined);
    }
    while ((await client.sandboxes.list().all()).length > 0) {
      if (Date.now() > deadline) throw new Error(`sandboxes of ${workspace.name} not terminated in time`);
      await new Promise((r) => setTimeout(r, 250));
    }
  }
  await platform.stop();
  const leftovers = missingCapability() === null ? hostLeftovers(ids) : [];
  try {
    removeHome(platform.home);
  } catch {
    // a mount released a moment late; /tmp is cleaned anyway
  }
  return leftovers;
}
