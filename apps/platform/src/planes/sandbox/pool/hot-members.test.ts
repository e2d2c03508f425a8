// The hot member's bookkeeping (hot-members.ts): at most one thawed member per shape, the one a
// claim takes first; a member that does not answer once thawed is handed back to be destroyed.
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { HotMembers } from './hot-members.js';
import type { PoolMember } from './pool-member.js';

const member = (n: number): PoolMember => ({
  recordId: `r${n}`,
  engineId: `sb-${n}`,
  ip: `10.0.0.${n}`,
  bootedMs: 0,
  shape: 'img@512',
  engineImage: 'img',
  memoryMB: 512,
  imageSizeBytes: undefined,
});

function setup(answers = true) {
  const thawed: string[] = [];
  const broken: string[] = [];
  const hot = new HotMembers({
    thaw: (id) => thawed.push(id),
    ping: async () => {
      if (!answers) throw new Error('no answer');
    },
    broken: (m) => broken.push(m.engineId),
    logger: pino({ level: 'silent' }),
  });
  return { hot, thawed, broken };
}

describe('HotMembers', () => {
  it('thaws the first frozen member of a shape, and only while the shape has no hot one', async () => {
    const { hot, thawed } = setup();
    const list = [member(1), member(2)];
    await hot.promote(list);
    expect(thawed).toEqual(['sb-1']);
    expect(hot.isHot(list[0]!)).toBe(true);
    expect(hot.isHot(list[1]!)).toBe(false);
    await hot.promote(list);
    expect(thawed).toEqual(['sb-1']); // one hot member per shape
    // A new boot is not made hot while the shape has one; once the hot one is claimed, it may be.
    expect(hot.adopt(list, member(3))).toBe(false);
    const claimed = list.shift()!;
    hot.forget(claimed);
    expect(hot.isHot(claimed)).toBe(false);
    expect(hot.adopt(list, member(3))).toBe(true);
  });

  it('hands back a member that does not answer once thawed, and never marks it hot', async () => {
    const { hot, broken } = setup(false);
    const list = [member(1)];
    await hot.promote(list);
    expect(broken).toEqual(['sb-1']);
    expect(hot.isHot(list[0]!)).toBe(false);
  });

  it('does not mark hot a member claimed while its thaw was being checked', async () => {
    const { hot } = setup();
    const list = [member(1)];
    const promoting = hot.promote(list);
    const claimed = list.shift()!; // a claim took it meanwhile
    await promoting;
    expect(hot.isHot(claimed)).toBe(false);
  });
});
