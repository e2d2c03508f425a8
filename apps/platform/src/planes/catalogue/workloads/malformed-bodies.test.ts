import {
  agentInputSchema,
  applicationInputSchema,
  customDomainInputSchema,
  functionInputSchema,
  imageCreateSchema,
  imageShareSchema,
  integrationConnectionInputSchema,
  jobInputSchema,
  modelInputSchema,
  policyInputSchema,
} from '@tarmac/contract';
import { testDatabases } from '@tarmac/store/test-support';
import { afterAll, beforeAll, describe, it } from 'vitest';
import {
  checkMalformedBodiesRejected,
  type BodyRoute,
} from '../../../framework/test-support/malformed-bodies.js';
import { openTestPlatform, type TestPlatform } from '../../../framework/test-support/platform-harness.js';

// Property (issue 3 part B): random malformed bodies at every create/update route of agents,
// functions, models, jobs, applications, images, connections, policies and custom domains → a 4xx
// whose message names a field, and the store unchanged (part A's helper).
const envs = [
  { name: 'MODE', value: 'fast' },
  { name: 'TOKEN', value: 's3cret', secret: true },
];
const agent = {
  metadata: { name: 'ag', displayName: 'Agent', labels: { team: 'ai' } },
  spec: {
    enabled: true,
    region: 'local',
    policies: ['pol'],
    volumes: [{ name: 'data', mountPath: '/data', readOnly: false }],
    runtime: { envs, generation: 'mk3', image: 'agents/ag:1', memory: 2048, minScale: 0, maxScale: 3 },
    triggers: [
      { type: 'http', configuration: { path: '/invoke', authenticationType: 'private' } },
      {
        type: 'http-async',
        configuration: { callbackUrl: 'https://hooks.example.com/a', retry: 2, timeout: 60 },
      },
    ],
  },
};
const fn = {
  metadata: { name: 'fn' },
  spec: {
    type: 'mcp',
    integrationConnections: ['conn'],
    runtime: {
      type: 'mcp',
      envs,
      memory: 1024,
      ports: [{ target: 8080, protocol: 'HTTP' }],
      transport: 'http-stream',
    },
    triggers: [{ type: 'http', configuration: { authenticationType: 'public' } }],
  },
};
const model = {
  metadata: { name: 'md' },
  spec: {
    integrationConnections: ['conn'],
    flavors: [{ name: 'x86', type: 'cpu' }],
    runtime: { type: 'openai', model: 'gpt-4.1', generation: 'mk3' },
  },
};
const job = {
  metadata: { name: 'jb' },
  spec: {
    runtime: { envs, image: 'jobs/jb:1', memory: 2048, maxRetries: 1, timeout: 600, diskPercent: 50 },
    triggers: [{ type: 'cron', configuration: { schedule: '0 3 * * *', tasks: [{ n: 1 }] } }],
    volumes: [{ name: 'scratch', mountPath: '/scratch', type: 'ephemeral', sizeMb: 512 }],
  },
};
const application = {
  metadata: { name: 'ap' },
  spec: { image: 'apps/web:1', envs, memory: 2048, port: 8080, urls: [{ subdomain: 'web' }] },
};
const connection = {
  metadata: { name: 'cn', displayName: 'GitHub' },
  spec: { integration: 'github', secret: { CLIENT_ID: 'id', CLIENT_SECRET: 's', REFRESH_TOKEN: 'r' } },
};
const policy = {
  metadata: { name: 'pl' },
  spec: {
    type: 'maxToken',
    maxTokens: { granularity: 'day', step: 2, input: 1000, output: 1000, total: 0 },
    resourceTypes: ['model', 'agent'],
  },
};
const domain = { metadata: { name: 'app.example.com' }, spec: { domainType: 'previews' } };

describe.each(testDatabases(process.env))(
  'malformed workload bodies are rejected without side effects ($name)',
  (database) => {
    let p: TestPlatform;
    beforeAll(async () => {
      p = await openTestPlatform(database);
      for (const [path, body] of [
        ['/v0/integrations/connections', { ...connection, metadata: { name: 'conn' } }],
        [
          '/v0/policies',
          {
            metadata: { name: 'pol' },
            spec: { type: 'location', locations: [{ name: 'eu', type: 'continent' }] },
          },
        ],
        ['/v0/agents', agent],
        ['/v0/functions', fn],
        ['/v0/models', model],
        ['/v0/jobs', job],
        ['/v0/applications', application],
        ['/v0/integrations/connections', connection],
        ['/v0/policies', policy],
        ['/v0/customdomains', domain],
        ['/v0/images', { resourceType: 'agents', name: 'img', image: 'ghcr.io/acme/img:1' }],
      ] as const) {
        const res = await p.request('POST', path, body);
        if (res.status !== 200) throw new Error(`setup ${path}: ${res.status} ${await res.text()}`);
      }
    });
    afterAll(async () => p.dispose());

    const fresh = <T extends { metadata: object }>(body: T, name: string) => ({
      ...body,
      metadata: { ...body.metadata, name },
    });
    const routes: BodyRoute[] = [
      { method: 'POST', path: '/v0/agents', valid: fresh(agent, 'ag2'), schema: agentInputSchema },
      { method: 'PUT', path: '/v0/agents/ag', valid: agent, schema: agentInputSchema },
      { method: 'POST', path: '/v0/functions', valid: fresh(fn, 'fn2'), schema: functionInputSchema },
      { method: 'PUT', path: '/v0/functions/fn', valid: fn, schema: functionInputSchema },
      { method: 'POST', path: '/v0/models', valid: fresh(model, 'md2'), schema: modelInputSchema },
      { method: 'PUT', path: '/v0/models/md', valid: model, schema: modelInputSchema },
      { method: 'POST', path: '/v0/jobs', valid: fresh(job, 'jb2'), schema: jobInputSchema },
      { method: 'PUT', path: '/v0/jobs/jb', valid: job, schema: jobInputSchema },
      {
        method: 'POST',
        path: '/v0/applications',
        valid: fresh(application, 'ap2'),
        schema: applicationInputSchema,
      },
      { method: 'PUT', path: '/v0/applications/ap', valid: application, schema: applicationInputSchema },
      {
        method: 'POST',
        path: '/v0/integrations/connections',
        valid: fresh(connection, 'cn2'),
        schema: integrationConnectionInputSchema,
      },
      {
        method: 'PUT',
        path: '/v0/integrations/connections/cn',
        valid: connection,
        schema: integrationConnectionInputSchema,
      },
      { method: 'POST', path: '/v0/policies', valid: fresh(policy, 'pl2'), schema: policyInputSchema },
      { method: 'PUT', path: '/v0/policies/pl', valid: policy, schema: policyInputSchema },
      {
        method: 'POST',
        path: '/v0/customdomains',
        valid: fresh(domain, 'b.example.com'),
        schema: customDomainInputSchema,
      },
      {
        method: 'PUT',
        path: '/v0/customdomains/app.example.com',
        valid: domain,
        schema: customDomainInputSchema,
      },
      {
        method: 'POST',
        path: '/v0/images',
        valid: { resourceType: 'jobs', name: 'img2', image: 'ghcr.io/acme/img2:1', size: 10 },
        schema: imageCreateSchema,
      },
      {
        method: 'POST',
        path: '/v0/images/agents/img/share',
        valid: { targetWorkspace: 'other' },
        schema: imageShareSchema,
      },
    ];
    for (const route of routes) {
      it(`${route.method} ${route.path}`, async () => {
        await checkMalformedBodiesRejected(p, route, { numRuns: 40 });
      }, 60_000);
    }
  },
);
