// The sandbox API's OpenAPI document (issue 14 item 9) is generated from the contract's route
// table (packages/contract src/sandbox-api/routes.ts), not from this router: this checks that the
// two list the same routes, so a route added here without documenting it, or documented and
// never served, fails.
import { sandboxApiRoutes } from '@tarmac/contract';
import { describe, expect, it } from 'vitest';
import { createSandboxd, defaultConfig } from './sandboxd.js';

/** Routes this router has that are not operations: the welcome on every method, /mcp's 405s. */
const NOT_OPERATIONS = new Set(['POST /', 'PUT /', 'DELETE /', 'GET /mcp', 'PUT /mcp', 'DELETE /mcp']);

describe('sandbox route table vs sandboxd router', () => {
  it('lists exactly the routes sandboxd serves', async () => {
    const d = createSandboxd(defaultConfig({ workingDir: '/tmp' }));
    const served = new Set(
      d.app.routes
        .filter((r) => ['GET', 'POST', 'PUT', 'DELETE'].includes(r.method))
        .map((r) => `${r.method} ${r.path}`)
        .filter((k) => !NOT_OPERATIONS.has(k)),
    );
    const documented = new Set(
      sandboxApiRoutes.map(
        (r) => `${r.method.toUpperCase()} ${r.path.replace('{path}', '*').replace(/\{([^}]+)\}/g, ':$1')}`,
      ),
    );
    expect([...documented].filter((k) => !served.has(k)).sort()).toEqual([]);
    expect([...served].filter((k) => !documented.has(k)).sort()).toEqual([]);
    await d.shutdown();
  });
});
