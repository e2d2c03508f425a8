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
          // Fails the run when it leaves bridges, firewall lines, namespaces, mounts or homes behind.
          globalSetup: ['tests/e2e/support/leak-check.global.ts'],
          // eventsource-parser (used by the MCP SDK's client, tests/e2e/sandbox-api, and by the
          // vendor's @blaxel/core) exports its TypeScript sources under our "source" condition;
          // inlining the SDKs and it lets Vite transform that .ts instead of handing it to Node.
          server: { deps: { inline: ['@modelcontextprotocol/sdk', 'eventsource-parser', '@blaxel/core'] } },
          testTimeout: 60_000,
          hookTimeout: 120_000,
        },
      },
    ],
  },
});
