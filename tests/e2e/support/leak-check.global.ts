// vitest globalSetup of the e2e project: the run leaves the host as it found it (issue 14 item 9).
// Every test file's temp files (homes, disks, volume images, scratch projects) go under one TMPDIR
// made for this run, so whatever is left there, or mounted or loop-attached from there, is ours;
// bridges, iptables lines, nft tables and network namespaces are compared before and after for the
// names and subnets of the files that ran (host-leftovers.ts). Anything left fails the run.
// TARMAC_E2E_LEAK_CHECK=0 turns it off (e.g. to inspect what a failing file left).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestProject } from 'vitest/node';
import { hostState, leftovers, mentions, runNames, testFiles } from './host-leftovers.js';

export default function setup(project: TestProject) {
  if (process.env.TARMAC_E2E_LEAK_CHECK === '0' || process.getuid?.() !== 0) return undefined;
  const tmp = mkdtempSync(join(tmpdir(), 'tarmac-e2e-run-'));
  // The e2e workers' environment only: os.tmpdir() reads TMPDIR at each call, so there it is this
  // directory. Not this process's: the unit project's workers, started by it, would inherit it.
  project.config.env = { ...project.config.env, TMPDIR: tmp };
  // Which files will run is not known yet: snapshot what every e2e file names, then judge only
  // what the files that ran name.
  const every = runNames(testFiles(join(project.config.root, 'tests/e2e')));
  const before = hostState(every, tmp);
  return () => {
    const scope = runNames(project.vitest.state.getFiles().map((f) => f.filepath));
    const left = leftovers(before, hostState(every, tmp)).filter(
      (l) => /^(loop |mount |left in TMPDIR)/.test(l) || mentions(scope, ` ${l}`),
    );
    if (left.length === 0) {
      rmSync(tmp, { recursive: true, force: true });
      return;
    }
    // vitest reports an error thrown here but keeps its exit code: set it.
    process.exitCode = 1;
    throw new Error(`the e2e run left these on the host (issue 14 item 9):\n  ${left.join('\n  ')}`);
  };
}
