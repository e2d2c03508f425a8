import type { MetadataInput, Policy, PolicySpec, PolicyUsages } from '@tarmac/contract';
import { conflict, type PageRequest, type PageResult, type WorkspaceAccess } from '@tarmac/server-kit';
import type { ResourceRow } from '@tarmac/store';
import { ResourceCollection, mapPage } from '../../../framework/collection.js';
import { newEvent } from '../../../framework/events.js';
import { assertSameName, envelopeMetadata, eventsOf, metadataColumns } from '../../../framework/envelope.js';
import { POLICY_KIND, referrers } from '../workloads/references.js';
import type { WorkloadDeps } from '../workloads/workload.service.js';

/**
 * Policies (reference §1.12, §2.3): location, flavor and token-budget rules that workloads attach
 * by name in `spec.policies`. List items carry `usage` counts; `/usages` names the users. A policy
 * in use cannot be deleted (409), like a connection in use.
 */
type Input = { metadata: MetadataInput; spec: PolicySpec };

/** Kinds whose spec carries `policies`, and the key of each in `PolicyUsages`. */
const USERS = [
  ['agent', 'agents'],
  ['function', 'functions'],
  ['job', 'jobs'],
  ['model', 'models'],
  ['sandbox', 'sandboxes'],
] as const;

export class PoliciesService {
  private readonly rows: ResourceCollection<PolicySpec>;

  constructor(
    private readonly deps: WorkloadDeps,
    private readonly apiUrl: () => string,
  ) {
    this.rows = new ResourceCollection(deps, POLICY_KIND, 'Policy');
  }

  async list(ws: WorkspaceAccess, page: PageRequest): Promise<PageResult<Policy>> {
    const workspace = ws.name;
    const rows = await this.rows.list(workspace, page);
    const items = await Promise.all(rows.items.map((row) => this.view(row)));
    return { ...mapPage(rows, () => undefined), items };
  }

  async get(ws: WorkspaceAccess, name: string): Promise<Policy> {
    const workspace = ws.name;
    return this.view(await this.rows.get(workspace, name));
  }

  async create(ws: WorkspaceAccess, actor: string, input: Input): Promise<Policy> {
    const workspace = ws.name;
    const row = await this.rows.create({
      workspace,
      name: input.metadata.name,
      actor,
      ...metadataColumns(input.metadata),
      spec: input.spec,
      status: null,
      event: newEvent(
        undefined,
        'configuration',
        'DEPLOYED', // the deployment status enum only (spec "Events" rule 1): in effect at once
        `${input.spec.type} policy created`,
        this.deps.now(),
      ),
    });
    return this.view(row);
  }

  async update(ws: WorkspaceAccess, actor: string, name: string, input: Input): Promise<Policy> {
    const workspace = ws.name;
    assertSameName(name, input.metadata.name);
    const row = await this.rows.get(workspace, name);
    const event = newEvent(
      row,
      'configuration',
      'DEPLOYED',
      `${input.spec.type} policy updated`,
      this.deps.now(),
    );
    return this.view(
      await this.rows.update(
        row,
        { ...metadataColumns(input.metadata, row), spec: input.spec },
        actor,
        event,
      ),
    );
  }

  async delete(ws: WorkspaceAccess, name: string): Promise<Policy> {
    const workspace = ws.name;
    const row = await this.rows.get(workspace, name);
    const usages = await this.usagesOf(workspace, name);
    const users = USERS.flatMap(([kind, key]) => usages[key].map((n) => `${kind} "${n}"`));
    if (users.length > 0)
      throw conflict(`Policy "${name}" is in use by ${users.join(', ')}; detach it first`);
    const view = await this.view(row);
    await this.rows.remove(row);
    return view;
  }

  async usages(ws: WorkspaceAccess, name: string): Promise<PolicyUsages> {
    const workspace = ws.name;
    await this.rows.get(workspace, name);
    return this.usagesOf(workspace, name);
  }

  private async usagesOf(workspace: string, name: string): Promise<PolicyUsages> {
    const entries = await Promise.all(
      USERS.map(
        async ([kind, key]) =>
          [key, await referrers(this.deps.store, workspace, kind, 'policies', name)] as const,
      ),
    );
    return Object.fromEntries(entries) as PolicyUsages;
  }

  private async view(row: ResourceRow<PolicySpec>): Promise<Policy> {
    const usages = await this.usagesOf(row.workspace, row.name);
    return {
      metadata: envelopeMetadata(row, `${this.apiUrl()}/v0/policies/${row.name}`),
      spec: row.spec,
      events: eventsOf(row),
      usage: {
        agents: usages.agents.length,
        functions: usages.functions.length,
        jobs: usages.jobs.length,
        models: usages.models.length,
        sandboxes: usages.sandboxes.length,
      },
    };
  }
}
