import { defineConfig } from 'vitest/config';

// Workspace packages resolve to their TypeScript sources through the "source" export condition.
export default defineConfig({
  resolve: { conditions: ['source'] },
  ssr: { resolve: { conditions: ['source'] } },
  test: {
    projects: [
      {
        extends: true,
        test: { name: 'unit', include: ['packages/*/src/**/*.test.ts', 'apps/*/src/**/*.test.ts'] },
      },
      {
        extends: true,
        test: {
          name: 'e2e',
          include: ['tests/e2e/**/*.test.ts'],
          // One file at a time: e2e files start real platforms and sandboxes, which share the
          // host's cgroups, bridge and CPU; on a 2-core machine parallel files only add noise.
          fileParallelism: false,
          // eventsource-parser (used by the MCP SDK's client, tests/e2e/sandbox-api) exports its
          // TypeScript sources under our "source" condition; inlining the SDK and it lets Vite
          // transform that .ts instead of handing it to Node.
          // @blaxel/core (tests/e2e/sdk/blaxel-core.test.ts) imports both.
          server: { deps: { inline: ['@modelcontextprotocol/sdk', 'eventsource-parser', '@blaxel/core'] } },
          testTimeout: 60_000,
          hookTimeout: 120_000,
        },
      },
    ],
  },
});
