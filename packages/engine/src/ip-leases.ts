// Sandbox addresses, leased as files created with O_EXCL: safe across engine instances and
// processes sharing one home (a restarted platform, tests), and it survives crashes on disk.
import { mkdirSync, openSync, closeSync, readdirSync, rmSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { intToIp, type Subnet } from './subnet.js';

export class IpLeases {
  /** Where to start the next search; a hint only, the files are the truth. */
  private cursor: number;

  constructor(
    private readonly dir: string,
    private readonly subnet: Subnet,
  ) {
    this.cursor = subnet.first;
  }

  /** Leases the next free address to `owner`. */
  acquire(owner: string): string {
    mkdirSync(this.dir, { recursive: true });
    const size = this.subnet.last - this.subnet.first + 1;
    for (let i = 0; i < size; i++) {
      const n = this.subnet.first + ((this.cursor - this.subnet.first + i) % size);
      const ip = intToIp(n);
      try {
        const fd = openSync(join(this.dir, ip), 'wx');
        writeSync(fd, owner);
        closeSync(fd);
        // Round-robin rather than lowest-free, so a just-freed address is not reused at once
        // (the platform may still hold connections to it).
        this.cursor = n + 1 > this.subnet.last ? this.subnet.first : n + 1;
        return ip;
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      }
    }
    throw new Error('no free sandbox addresses in subnet');
  }

  release(ip: string): void {
    rmSync(join(this.dir, ip), { force: true });
  }

  leased(): string[] {
    try {
      return readdirSync(this.dir);
    } catch {
      return [];
    }
  }
}
