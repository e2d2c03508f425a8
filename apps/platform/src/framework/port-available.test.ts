import { createServer } from 'node:net';
import { describe, expect, it } from 'vitest';
import { portAvailable, portInUseMessage } from './port-available.js';

describe('portAvailable', () => {
  it('is false while another listener holds the port, true once it is closed', async () => {
    const holder = createServer();
    await new Promise<void>((resolve) => holder.listen(0, '127.0.0.1', resolve));
    const address = holder.address();
    const port = typeof address === 'object' && address ? address.port : 0;
    expect(await portAvailable(createServer, '127.0.0.1', port)).toBe(false);
    await new Promise<void>((resolve) => holder.close(() => resolve()));
    expect(await portAvailable(createServer, '127.0.0.1', port)).toBe(true);
  });

  it('port 0 (any free port) is always available', async () => {
    expect(await portAvailable(createServer, '127.0.0.1', 0)).toBe(true);
  });

  it('names the port and host in one line', () => {
    expect(portInUseMessage('127.0.0.1', 8080)).toMatch(
      /^port 8080 on 127\.0\.0\.1 is already in use[^\n]*$/,
    );
  });
});
