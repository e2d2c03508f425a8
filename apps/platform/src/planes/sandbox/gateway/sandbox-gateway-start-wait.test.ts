// The sandbox gateway's requests to sandboxes that are still starting (issue 14 item 1), over real
// HTTP (test-support/sandbox-gateway-fixture.ts): held until the controller reports the sandbox
// live, failed at once with the reason when its deploy fails, and 503 with Retry-After when the
// wait (1.5 s here) runs out or too many (2 here) already wait.
import type { Store } from '@tarmac/store';
import { newResource } from '@tarmac/store/test-support';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LiveSandboxes } from '../controllers/live-sandboxes.js';
import type { StartWaiters } from './start-waiters.js';
import {
  startSandboxGatewayFixture,
  type SandboxGatewayFixture,
} from '../../../test-support/sandbox-gateway-fixture.js';

describe('sandbox gateway: requests to starting sandboxes', () => {
  let f: SandboxGatewayFixture;
  let store: Store;
  let base = '';
  let ws = '';
  let live: LiveSandboxes;
  let starts: StartWaiters;
  const entry = (name: string) => f.entry(name);
  const auth = () => f.auth();

  beforeAll(async () => {
    f = await startSandboxGatewayFixture();
    ({ store, base, ws, live, starts } = f);
  });

  afterAll(() => f.close());

  async function starting(name: string): Promise<void> {
    await store.resources.create(newResource({ id: `rec-${name}`, workspace: ws, name }));
  }

  // Issue 14 item 1: a request right after create is held until the sandbox is live, not 503'd.
  it('holds a request to a DEPLOYING sandbox and forwards it once the controller reports it live', async () => {
    await starting('starting');
    const t0 = Date.now();
    const pending = fetch(`${base}/${ws}/sandboxes/starting/health`, { headers: auth() });
    await new Promise((r) => setTimeout(r, 300));
    expect(starts.size).toBe(1); // held, not answered
    live.add(entry('starting'));
    starts.notify(ws, 'starting');
    const res = await pending;
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ path: '/health' });
    expect(Date.now() - t0).toBeLessThan(1400); // woken by the notice, not by the 1.5 s bound
    expect(starts.size).toBe(0);
    live.remove('id-starting');
  });

  it('fails a held request at once, with the reason, when the deploy goes FAILED', async () => {
    await starting('doomed');
    const t0 = Date.now();
    const pending = fetch(`${base}/${ws}/sandboxes/doomed/process`, {
      method: 'POST',
      headers: auth(),
      body: '{}',
    });
    await new Promise((r) => setTimeout(r, 200));
    await store.resources.update('rec-doomed', {
      status: 'FAILED',
      events: [
        {
          type: 'Failure',
          status: 'FAILED',
          message: 'Could not start: image "x" is gone',
          time: new Date().toISOString(),
          revision: '',
          canaryRevision: '',
        },
      ],
    });
    starts.notify(ws, 'doomed');
    const res = await pending;
    expect(Date.now() - t0).toBeLessThan(1400);
    expect(res.status).toBe(503);
    expect(await res.json()).toEqual({ error: 'sandbox doomed FAILED: Could not start: image "x" is gone' });
  });

  it('answers 503 with Retry-After when the start wait runs out, and bounds how many wait', async () => {
    await starting('slow');
    const t0 = Date.now();
    const held = [1, 2].map(() => fetch(`${base}/${ws}/sandboxes/slow/health`, { headers: auth() }));
    await new Promise((r) => setTimeout(r, 200));
    const third = await fetch(`${base}/${ws}/sandboxes/slow/health`, { headers: auth() });
    expect(third.status).toBe(503); // the bound (2 here) is full: refused at once
    expect((await third.json()) as unknown).toEqual({
      error: 'sandbox slow is starting and 2 requests already wait for sandboxes to start; retry shortly',
    });
    for (const res of await Promise.all(held)) {
      expect(res.status).toBe(503);
      expect(res.headers.get('retry-after')).toBe('1');
      expect(await res.json()).toEqual({ error: 'sandbox slow is still starting after 2 s; retry shortly' });
    }
    expect(Date.now() - t0).toBeGreaterThanOrEqual(1400);
    expect(starts.size).toBe(0);
  });
});
