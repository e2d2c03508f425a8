// Issue 19 item 11 at the management API: a public preview of port 443 (the sandbox API as a
// session) or any preview of sandboxd's own port is refused with 400 naming spec.port, at create
// and at update; a private session and ordinary ports are unaffected.
import { testDatabases } from '@tarmac/store/test-support';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openTestPlatform, type TestPlatform } from '../../../framework/test-support/platform-harness.js';
import { sandboxApiExposure } from './sandbox-api-exposure.js';

const preview = (name: string, spec: Record<string, unknown>) => ({
  metadata: { name, resourceName: 'ignored', resourceType: 'sandbox' },
  spec,
});

describe('sandboxApiExposure', () => {
  it('refuses public 443 and any 8080, allows private 443 (a session) and other ports', () => {
    expect(sandboxApiExposure(443, true)).toMatch(/port 443 is the sandbox API/);
    expect(sandboxApiExposure(8080, false)).toMatch(/port 8080 is the sandbox API's own port/);
    expect(sandboxApiExposure(8080, true)).toBeDefined();
    expect(sandboxApiExposure(443, false)).toBeUndefined();
    expect(sandboxApiExposure(3000, true)).toBeUndefined();
  });
});

describe.each(testDatabases(process.env).slice(0, 1))(
  'sandbox API previews over HTTP ($name)',
  (database) => {
    let p: TestPlatform;
    beforeEach(async () => {
      p = await openTestPlatform(database);
      expect((await p.call('POST', '/v0/sandboxes', { metadata: { name: 'web' }, spec: {} })).status).toBe(
        200,
      );
    });
    afterEach(async () => {
      await p.dispose();
    });

    it('400 naming spec.port for a public preview of 443 and a preview of 8080; private 443 is a session', async () => {
      for (const spec of [
        { port: 443, public: true },
        { port: 8080, public: false },
        { port: 8080, public: true },
      ]) {
        const r = await p.call('POST', '/v0/sandboxes/web/previews', preview('api', spec));
        expect(r.status, JSON.stringify(spec)).toBe(400);
        expect(r.body.message).toMatch(/^spec\.port: port (443|8080)/);
      }
      expect((await p.call('GET', '/v0/sandboxes/web/previews/api')).status).toBe(404);
      const session = await p.call(
        'POST',
        '/v0/sandboxes/web/previews',
        preview('sess', { port: 443, public: false }),
      );
      expect(session.status).toBe(200);
      // Turning the session public later is refused too, and leaves it private.
      const update = await p.call(
        'PUT',
        '/v0/sandboxes/web/previews/sess',
        preview('sess', { port: 443, public: true }),
      );
      expect(update.status).toBe(400);
      expect((await p.call('GET', '/v0/sandboxes/web/previews/sess')).body.spec.public).toBe(false);
    });
  },
);
