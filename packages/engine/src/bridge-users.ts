// Who uses a host bridge, so the last platform to stop can remove what a platform created
// (issue 14 item 9: test runs left ~15 bridges and ~400 iptables lines behind). Several platforms
// may share one bridge (tests on one machine, a restart overlapping the old process), and an
// operator may have made the bridge: so the bridge, its iptables chain and its nft tables go only
// when (1) an engine created the bridge (the `created` marker), (2) no live process still uses it
// (one file per user pid), and (3) no sandbox port is attached (sandboxes outlive a stopped platform
// by design; their network must stay). Kept under /run (tmpfs): a reboot forgets it with the bridge.
import { existsSync, mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export class BridgeUsers {
  constructor(
    /** e.g. /run/tarmac/net/<bridge> */
    private readonly dir: string,
    private readonly pid: number = process.pid,
    private readonly alive: (pid: number) => boolean = pidAlive,
  ) {}

  /** Before looking at or creating the bridge: a stopping user then sees this one. */
  register(): void {
    mkdirSync(join(this.dir, 'users'), { recursive: true });
    writeFileSync(join(this.dir, 'users', String(this.pid)), '');
  }

  markCreated(): void {
    mkdirSync(this.dir, { recursive: true });
    writeFileSync(join(this.dir, 'created'), String(this.pid));
  }

  created(): boolean {
    return existsSync(join(this.dir, 'created'));
  }

  /** Unregisters this process; true when no other live process uses the bridge. */
  unregister(): boolean {
    const users = join(this.dir, 'users');
    rmSync(join(users, String(this.pid)), { force: true });
    if (!existsSync(users)) return true;
    let others = 0;
    for (const name of readdirSync(users)) {
      const pid = Number(name);
      if (Number.isInteger(pid) && this.alive(pid)) others++;
      else rmSync(join(users, name), { force: true }); // a process that died without stopping
    }
    return others === 0;
  }

  forgetCreated(): void {
    rmSync(join(this.dir, 'created'), { force: true });
  }
}

function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}
