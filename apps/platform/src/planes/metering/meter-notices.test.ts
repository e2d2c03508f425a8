// Change notices trigger a metering pass shortly after, never inside the writer's call (issue 20
// item 1: a pass there delayed the create's response), and a burst of them makes one pass.
import { describe, expect, it } from 'vitest';
import { ChangeFeed } from '../../framework/change-feed.js';
import { Meter } from './meter.js';

describe('meter passes on change notices', () => {
  it('runs one pass for a burst of notices, after the writer returned', async () => {
    let passes = 0;
    const meter = new Meter({
      sources: [
        {
          kind: 'sandbox',
          observe: async () => {
            passes++;
            return [];
          },
        },
      ],
      metering: { record: async () => 0 },
      now: Date.now,
    });
    const changes = new ChangeFeed();
    meter.start(3_600_000, changes);
    try {
      for (let i = 0; i < 5; i++) changes.publish({ workspace: 'w', kind: 'sandbox', name: `s${i}` });
      await new Promise((r) => setImmediate(r));
      expect(passes).toBe(0); // not in the publisher's turn, nor the next one
      await new Promise((r) => setTimeout(r, 300));
      expect(passes).toBe(1);
      changes.publish({ workspace: 'w', kind: 'other', name: 'x' });
      await new Promise((r) => setTimeout(r, 300));
      expect(passes).toBe(1); // a kind no source reads triggers nothing
    } finally {
      await meter.stop();
    }
  });
});
