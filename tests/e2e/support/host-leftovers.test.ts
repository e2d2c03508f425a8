// The leak check's own logic (leak-check.global.ts): which names a run owns, and what counts as
// left behind. No platform needed.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { leftovers, mentions, runNames, type HostState } from './host-leftovers.js';

// Built, not literal: tests/e2e/support/subnets.test.ts would count literal /16s as this file's.
const S1 = ['10', '101', '0', '0/16'].join('.');
const S2 = ['10', '102', '0', '0/16'].join('.');
const q = "'";

const empty: HostState = {
  links: [],
  iptables: [],
  nftTables: [],
  netns: {},
  loops: [],
  mounts: [],
  tmpEntries: [],
};

describe('e2e leak check', () => {
  it('takes bridges and /16s from the files and the modules they import, never the default', () => {
    const dir = mkdtempSync(join(tmpdir(), 'leak-names-'));
    try {
      writeFileSync(
        join(dir, 'support.ts'),
        `export const N = { TARMAC_BRIDGE: 'tbr1', TARMAC_SUBNET: ${q}${S1}${q} };`,
      );
      writeFileSync(
        join(dir, 'a.test.ts'),
        `import { N } from './support.js';\nconst x = { bridge: 'tbr2', subnet: ${q}${S2}${q} };\nconst d = { bridge: 'tarmac0', subnet: '10.200.0.0/16' };`,
      );
      expect(runNames([join(dir, 'a.test.ts')])).toEqual({
        bridges: ['tbr1', 'tbr2'],
        subnets: [S1, S2],
      });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('matches whole names only', () => {
    const names = { bridges: ['tbr1'], subnets: [S1] };
    expect(mentions(names, ' -A INPUT -i tbr1 -j TARMAC-IN-tbr1')).toBe(true);
    expect(mentions(names, ' -A INPUT -i tbr10 -j DROP')).toBe(false);
    expect(mentions(names, ' table bridge tarmac_tbr1')).toBe(true);
    expect(mentions(names, ' -d 10.101.0.1/32')).toBe(true);
    expect(mentions(names, ' -d 110.101.0.1/32')).toBe(false);
  });

  it('reports what appeared, counting duplicates, and nothing that was there before', () => {
    const before = { ...empty, links: ['tbr1'], iptables: ['-A INPUT -i tbr1 -j X'] };
    const after = {
      ...empty,
      links: ['tbr1', 'tbr2'],
      iptables: ['-A INPUT -i tbr1 -j X', '-A INPUT -i tbr1 -j X'],
      netns: { 'tarmac-sb1': 'inet 10.101.0.2/16' },
      tmpEntries: ['/tmp/run/tarmac-e2e-abc'],
    };
    expect(leftovers(before, after)).toEqual([
      'bridge tbr2',
      'iptables -A INPUT -i tbr1 -j X',
      'netns tarmac-sb1: inet 10.101.0.2/16',
      'left in TMPDIR: /tmp/run/tarmac-e2e-abc',
    ]);
    expect(leftovers(after, after)).toEqual([]);
  });
});
