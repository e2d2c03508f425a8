import { ConflictError, NotFoundError, type PageIterator, type Tarmac } from '@tarmac/sdk';
import { age } from './output.js';

/** A resource document as `apply` reads it and `get -o yaml` writes it. */
export interface ResourceDocument {
  apiVersion?: string;
  kind: string;
  metadata: { name: string; [key: string]: unknown };
  spec?: unknown;
}

type Item = Record<string, unknown>;
type Column = [header: string, cell: (item: Item) => string];

/**
 * One row of the resource table behind `get`, `delete` and `apply`: the type names and aliases of
 * reference §3.1 mapped onto routes. New route tables plug in by adding a row.
 */
export interface ResourceType {
  name: string;
  aliases: string[];
  kind: string;
  columns: Column[];
  nameOf(item: Item): string;
  list(client: Tarmac): PageIterator<Item>;
  get?(client: Tarmac, name: string): Promise<Item>;
  delete?(client: Tarmac, name: string): Promise<unknown>;
  /** Creates or updates; says which. */
  apply?(client: Tarmac, doc: ResourceDocument): Promise<'created' | 'configured'>;
}

const str = (value: unknown) => (value === undefined || value === null ? '' : String(value));
const meta = (item: Item) => (item.metadata ?? {}) as Record<string, unknown>;
const path = (base: string, name: string) => `${base}/${encodeURIComponent(name)}`;

/**
 * A `{metadata, spec, status}` resource under `/v0/<plural>` (reference §1 "CRUD-std"). `createFirst`:
 * POST then PUT on 409 (sandboxes, applications); otherwise PUT then POST on 404 (reference §3.1 apply).
 */
function envelopeType(
  name: string,
  aliases: string[],
  kind: string,
  base: string,
  options: { createFirst?: boolean; extra?: Column[]; status?: (item: Item) => string } = {},
): ResourceType {
  return {
    name,
    aliases,
    kind,
    columns: [
      ['name', (i) => str(meta(i).name)],
      ['status', options.status ?? ((i) => str(i.status))],
      ...(options.extra ?? []),
      ['age', (i) => age(str(meta(i).createdAt))],
    ],
    nameOf: (i) => str(meta(i).name),
    list: (client) => client.paginatePath<Item>(base),
    get: (client, n) => client.call<Item>('GET', path(base, n)),
    delete: (client, n) => client.call('DELETE', path(base, n)),
    apply: async (client, doc) => {
      const body = { metadata: doc.metadata, spec: doc.spec ?? {} };
      const put = () => client.call('PUT', path(base, doc.metadata.name), { json: body });
      const post = () => client.call('POST', base, { json: body });
      try {
        await (options.createFirst ? post() : put());
        return options.createFirst ? 'created' : 'configured';
      } catch (error) {
        if (options.createFirst && error instanceof ConflictError) return put().then(() => 'configured');
        if (!options.createFirst && error instanceof NotFoundError) return post().then(() => 'created');
        throw error;
      }
    },
  };
}

/**
 * A sandbox created without `spec.runtime.image` runs the engine's base image (packages/engine
 * images/refs.ts BASE_IMAGE); the column names it rather than staying empty (issue 14 item 9).
 */
export const DEFAULT_SANDBOX_IMAGE = 'tarmac/base:latest';
const image = (i: Item) =>
  str(((i.spec as Item | undefined)?.runtime as Item | undefined)?.image) || DEFAULT_SANDBOX_IMAGE;
/** A deployed sandbox in standby shows STANDBY: `status` is the deployment, `state` what it does. */
const sandboxStatus = (i: Item) =>
  i.status === 'DEPLOYED' && i.state === 'STANDBY' ? 'STANDBY' : str(i.status);

export const RESOURCE_TYPES: ResourceType[] = [
  envelopeType('sandboxes', ['sandbox', 'sb', 'sbx'], 'Sandbox', '/v0/sandboxes', {
    createFirst: true,
    status: sandboxStatus,
    extra: [['image', image]],
  }),
  envelopeType('agents', ['agent', 'ag'], 'Agent', '/v0/agents'),
  envelopeType('functions', ['function', 'fn', 'mcp', 'mcps'], 'Function', '/v0/functions'),
  envelopeType('models', ['model', 'ml'], 'Model', '/v0/models'),
  envelopeType('jobs', ['job', 'jb'], 'Job', '/v0/jobs'),
  envelopeType('applications', ['application', 'app', 'apps'], 'Application', '/v0/applications', {
    createFirst: true,
  }),
  envelopeType('policies', ['policy', 'pol'], 'Policy', '/v0/policies'),
  envelopeType('volumes', ['volume', 'vol'], 'Volume', '/v0/volumes'),
  envelopeType('volumetemplates', ['volumetemplate', 'vt'], 'VolumeTemplate', '/v0/volume_templates'),
  envelopeType('drives', ['drive', 'dr'], 'Drive', '/v0/drives'),
  envelopeType(
    'integrationconnections',
    ['integrationconnection', 'ic', 'connections'],
    'IntegrationConnection',
    '/v0/integrations/connections',
  ),
  {
    name: 'workspaces',
    aliases: ['workspace', 'ws'],
    kind: 'Workspace',
    columns: [
      ['name', (i) => str(i.name)],
      ['display name', (i) => str(i.displayName)],
      ['role', (i) => str(i.role)],
      ['age', (i) => age(str(i.createdAt))],
    ],
    nameOf: (i) => str(i.name),
    list: (c) => c.workspaces.list() as PageIterator<Item>,
    get: (c, n) => c.workspaces.get(n) as Promise<Item>,
    delete: (c, n) => c.workspaces.delete(n),
    apply: async (c, doc) => {
      const { name, displayName, labels } = doc.metadata as {
        name: string;
        displayName?: string;
        labels?: Record<string, string>;
      };
      try {
        await c.workspaces.create({ name, displayName, labels });
        return 'created';
      } catch (error) {
        if (!(error instanceof ConflictError)) throw error;
        await c.workspaces.update(name, { displayName, labels });
        return 'configured';
      }
    },
  },
  {
    name: 'users',
    aliases: ['user', 'members'],
    kind: 'User',
    columns: [
      ['email', (i) => str(i.email)],
      ['role', (i) => str(i.role)],
      ['accepted', (i) => str(i.accepted)],
    ],
    nameOf: (i) => str(i.email),
    list: (c) => c.users.list() as PageIterator<Item>,
    delete: (c, n) => c.users.remove(n),
  },
  {
    name: 'serviceaccounts',
    aliases: ['serviceaccount', 'sa', 'service_accounts'],
    kind: 'ServiceAccount',
    columns: [
      ['client id', (i) => str(i.client_id)],
      ['name', (i) => str(i.name)],
      ['age', (i) => age(str(i.created_at))],
    ],
    nameOf: (i) => str(i.client_id),
    list: (c) => c.serviceAccounts.list() as PageIterator<Item>,
    delete: (c, n) => c.serviceAccounts.delete(n),
  },
  {
    name: 'apikeys',
    aliases: ['apikey', 'api_keys', 'keys'],
    kind: 'ApiKey',
    columns: [
      ['id', (i) => str(i.id)],
      ['name', (i) => str(i.name)],
      ['expires', (i) => str(i.expiresAt) || 'never'],
      ['age', (i) => age(str(i.createdAt))],
    ],
    nameOf: (i) => str(i.id),
    list: (c) => c.apiKeys.list() as PageIterator<Item>,
    delete: (c, n) => c.apiKeys.delete(n),
  },
  {
    name: 'accounts',
    aliases: ['account', 'acc'],
    kind: 'Account',
    columns: [
      ['id', (i) => str(i.id)],
      ['name', (i) => str(i.name)],
      ['admin', (i) => str(i.isAdmin)],
    ],
    nameOf: (i) => str(i.id),
    list: (c) => c.accounts.list() as PageIterator<Item>,
  },
];

/** Finds a type by name, alias or kind, case-insensitively. */
export function findResourceType(word: string): ResourceType | undefined {
  const w = word.toLowerCase();
  return RESOURCE_TYPES.find((t) => t.name === w || t.aliases.includes(w) || t.kind.toLowerCase() === w);
}

export function knownTypes(): string {
  return RESOURCE_TYPES.map((t) => t.name).join(', ');
}
