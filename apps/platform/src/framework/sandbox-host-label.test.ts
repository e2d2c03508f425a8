import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { decodeSandboxLabel, encodeSandboxLabel, legacySplits } from './sandbox-host-label.js';

/** Resource and workspace names (contract NAME_PATTERN), short so that dashes are frequent. */
const name = fc.stringMatching(/^[a-z0-9](?:[a-z0-9-]{0,10}[a-z0-9])?$/).filter((s) => s.length <= 49);

describe('sandbox host label (issue 19 item 12)', () => {
  it('decodes every encoded pair to itself: one label, one sandbox', () => {
    fc.assert(
      fc.property(name, name, (workspace, sandbox) => {
        expect(decodeSandboxLabel(encodeSandboxLabel(workspace, sandbox))).toEqual({
          workspace,
          name: sandbox,
        });
      }),
      { numRuns: 2000 },
    );
  });

  it('never gives two different pairs the same label', () => {
    fc.assert(
      fc.property(name, name, name, name, (w1, n1, w2, n2) => {
        fc.pre(w1 !== w2 || n1 !== n2);
        expect(encodeSandboxLabel(w1, n1)).not.toBe(encodeSandboxLabel(w2, n2));
      }),
      { numRuns: 2000 },
    );
  });

  it('is the plain form the reference builds when the name has no dash', () => {
    fc.assert(
      fc.property(name, name, (workspace, sandbox) => {
        fc.pre(!sandbox.includes('-'));
        expect(encodeSandboxLabel(workspace, sandbox)).toBe(`sbx-${sandbox}-${workspace}`);
      }),
    );
  });

  it('lists the plain form of a dashed name among the legacy readings of its host', () => {
    fc.assert(
      fc.property(name, name, (workspace, sandbox) => {
        expect(legacySplits(`sbx-${sandbox}-${workspace}`)).toContainEqual({ workspace, name: sandbox });
      }),
    );
  });

  it('the issue pair: team + x-ai and ai-team + x', () => {
    expect(encodeSandboxLabel('team', 'x-ai')).toBe('sbx-x--ai-team');
    expect(encodeSandboxLabel('ai-team', 'x')).toBe('sbx-x-ai-team');
    expect(legacySplits('sbx-x-ai-team')).toEqual([
      { name: 'x', workspace: 'ai-team' },
      { name: 'x-ai', workspace: 'team' },
    ]);
  });

  it('refuses labels no pair encodes to', () => {
    for (const bad of ['sbx-x---ai', 'sbx-ab', 'sbx--a-b', 'sbx-a-', 'sbx-a--b', 'box-a-b']) {
      expect(decodeSandboxLabel(bad), bad).toBeUndefined();
    }
  });
});
