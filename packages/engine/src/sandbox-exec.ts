// Running a command inside a running sandbox (LocalEngine.exec: debugging and tests; not part
// of Engine), with the env its processes get.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { bootEnvArgs, bootEnvFile, readBootEnv } from './boot-env.js';
import { EngineError } from './errors.js';
import type { RunResult } from './runner.js';
import { execEnvArgs } from './sandboxd-env.js';
import type { SandboxHost } from './sandbox-host.js';

export function execInSandbox(
  host: SandboxHost,
  id: string,
  args: string[],
  opts: { timeoutMs?: number; input?: string } = {},
): Promise<RunResult> {
  host.files.read(id);
  const pid = host.runc.alive(id)?.pid;
  if (pid === undefined) throw new EngineError(`sandbox ${id} is not running`);
  const found = host.bundles.find(id, host.files.layout(id));
  const oci = JSON.parse(readFileSync(join(found.bundle, 'config.json'), 'utf8')) as {
    process?: { env?: string[] };
  };
  // In the network namespace of the container's init (Runc.run: it is not in the config).
  return host.runc.exec(id, args, {
    ...opts,
    envArgs: [
      ...execEnvArgs(oci.process?.env ?? []),
      ...bootEnvArgs(readBootEnv(bootEnvFile(found.bootDir))),
    ],
    netnsPath: `/proc/${pid}/ns/net`,
  });
}
