import { afterEach, describe, expect, it } from 'vitest';
import { ExecutionDataServer } from './execution-data-server.js';

const ROW = '0b0f8a2c-1111-4222-8333-444455556666';
const OTHER = '0b0f8a2c-1111-4222-8333-444455557777';

describe('execution data server', () => {
  let server: ExecutionDataServer | undefined;
  afterEach(() => server?.close());

  it("answers an execution's tasks only with that execution's token", async () => {
    server = new ExecutionDataServer(new Uint8Array(32).fill(7), {
      tasksOf: async (id) => (id === ROW ? [{ n: 1 }] : id === OTHER ? [{ secret: true }] : undefined),
    });
    await server.listen('127.0.0.1', [0]);
    const url = server.urlFor(ROW)!;
    const ok = await fetch(url);
    expect(ok.status).toBe(200);
    expect(await ok.json()).toEqual({ tasks: [{ n: 1 }] });
    // The attack: another execution's data with this execution's token.
    const stolen = await fetch(url.replace(ROW, OTHER));
    expect(stolen.status).toBe(404);
    const forged = await fetch(url.slice(0, -4) + 'AAAA');
    expect(forged.status).toBe(404);
    expect((await fetch(url, { method: 'POST', body: '{}' })).status).toBe(404);
  });
});
