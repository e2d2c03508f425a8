import { computeRoutes, type RouteQueryInput } from '@tarmac/contract';
import type { TarmacClient } from '../client.js';
import { ConflictError, NotFoundError, TarmacError, TarmacTimeoutError } from '../http/errors.js';
import type { PageIterator } from '../http/pages.js';
import { sleep } from '../http/retry.js';
import { SandboxHttp } from './data-plane.js';
import { defaultClient } from './default-client.js';
import { SandboxFilesystem } from './filesystem.js';
import { SandboxPreviews } from './previews.js';
import { SandboxSchedules } from './schedules.js';
import { SandboxSnapshots } from './snapshots.js';
import { SandboxProcesses } from './process.js';
import { SandboxSessions, type SandboxSession } from './sessions.js';
import { SandboxTerminal } from './terminal.js';
import {
  sandboxBody,
  type SandboxCreateOptions,
  type SandboxResource,
  type SandboxUpdateBody,
} from './types.js';

const r = computeRoutes;
/** Statuses after which a sandbox will never become DEPLOYED. */
const DEAD = new Set(['FAILED', 'TERMINATED', 'TERMINATING', 'DELETING', 'DEACTIVATED']);

export type SandboxListQuery = Partial<RouteQueryInput<typeof computeRoutes.listSandboxes>>;

/**
 * A sandbox: its management record plus clients for its own API (`fs`, `process`, `terminal`,
 * `fetch`) and its `previews` and `sessions`. The API base is `metadata.url` (host style
 * `sbx-<name>-<ws>.<region>.<domain>`, a `-` in the name doubled), falling back to path style `{runUrl}/{ws}/sandboxes/{name}`.
 */
export class Sandbox {
  readonly fs: SandboxFilesystem;
  readonly process: SandboxProcesses;
  readonly terminal: SandboxTerminal;
  readonly previews: SandboxPreviews;
  readonly sessions: SandboxSessions;
  readonly schedules: SandboxSchedules;
  readonly snapshots: SandboxSnapshots;
  readonly url: string;
  private readonly http: SandboxHttp;

  constructor(
    public resource: SandboxResource,
    readonly client: TarmacClient,
    /** A forced base URL and headers (sessions, tests against a bare sandboxd). */
    force?: { url: string; headers?: Record<string, string> },
  ) {
    const workspace = resource.metadata.workspace || client.workspace || '';
    this.url = (
      force?.url ||
      client.options.sandboxUrl?.(resource.metadata.name) ||
      resource.metadata.url ||
      `${client.runUrl}/${encodeURIComponent(workspace)}/sandboxes/${encodeURIComponent(resource.metadata.name)}`
    ).replace(/\/+$/, '');
    this.http = new SandboxHttp(this.url, client, force?.headers);
    this.fs = new SandboxFilesystem(this.http);
    this.process = new SandboxProcesses(this.http);
    this.terminal = new SandboxTerminal(this.http);
    this.previews = new SandboxPreviews(client, resource.metadata.name);
    this.sessions = new SandboxSessions(this.previews);
    this.schedules = new SandboxSchedules(client, resource.metadata.name);
    this.snapshots = new SandboxSnapshots(client, resource.metadata.name);
  }

  get name(): string {
    return this.resource.metadata.name;
  }
  get status(): string {
    return this.resource.status;
  }
  get metadata() {
    return this.resource.metadata;
  }
  get spec() {
    return this.resource.spec;
  }

  static async create(options: SandboxCreateOptions = {}, client = defaultClient()): Promise<Sandbox> {
    const resource = await client.request(r.createSandbox, { body: sandboxBody(options) });
    return new Sandbox(resource, client);
  }

  /** Returns the live sandbox of that name, or creates it (reference §2.4 createIfNotExists). */
  static async createIfNotExists(options: SandboxCreateOptions & { name: string }, client = defaultClient()) {
    const deadline = Date.now() + 30_000;
    for (;;) {
      try {
        const resource = await client.request(r.createSandbox, {
          body: sandboxBody(options),
          query: { createIfNotExist: 'true' },
        });
        return new Sandbox(resource, client);
      } catch (error) {
        // 409: the name is held by a dying sandbox; wait until it is gone, then create again.
        if (!(error instanceof ConflictError) || Date.now() > deadline) throw error;
        await sleep(500);
      }
    }
  }

  static async get(name: string, client = defaultClient()): Promise<Sandbox> {
    return new Sandbox(await client.request(r.getSandbox, { params: { sandboxName: name } }), client);
  }

  static async getByExternalId(externalId: string, client = defaultClient()): Promise<Sandbox> {
    return new Sandbox(await client.request(r.getSandboxByExternalId, { params: { externalId } }), client);
  }

  static list(query: SandboxListQuery = {}, client = defaultClient()): PageIterator<Sandbox> {
    return client.paginate(r.listSandboxes, { query }).map((record) => new Sandbox(record, client));
  }

  static async delete(name: string, client = defaultClient()): Promise<SandboxResource> {
    return client.request(r.deleteSandbox, { params: { sandboxName: name } });
  }

  /** A sandbox reached through a session's preview URL and token (e.g. handed to a browser). */
  static fromSession(session: SandboxSession, client = defaultClient()): Sandbox {
    const resource = { metadata: { name: session.name }, spec: {}, status: 'DEPLOYED', events: [] };
    return new Sandbox(resource as unknown as SandboxResource, client, {
      url: session.url,
      headers: { 'x-service-preview-token': session.token },
    });
  }

  async refresh(): Promise<this> {
    this.resource = await this.client.request(r.getSandbox, { params: { sandboxName: this.name } });
    return this;
  }

  /**
   * Replaces the sandbox's metadata and spec (PUT of the whole object): starts from the current
   * record, lets `change` edit it, and sends the result. The platform redeploys on spec changes.
   */
  async update(change: (body: SandboxUpdateBody) => SandboxUpdateBody | void): Promise<this> {
    await this.refresh();
    const { metadata, spec } = this.resource;
    const body: SandboxUpdateBody = {
      metadata: {
        name: metadata.name,
        displayName: metadata.displayName,
        labels: { ...metadata.labels },
        ...(metadata.externalId ? { externalId: metadata.externalId } : {}),
      },
      spec: structuredClone(spec) as SandboxUpdateBody['spec'],
    };
    const next = change(body) ?? body;
    this.resource = await this.client.request(r.updateSandbox, {
      params: { sandboxName: this.name },
      body: next,
    });
    return this;
  }

  /** Sets (or with `null` clears) the max age, e.g. `24h`. */
  updateTtl(ttl: string | null): Promise<this> {
    return this.update((body) => {
      body.spec.runtime = { ...body.spec.runtime };
      if (ttl === null) delete body.spec.runtime.ttl;
      else body.spec.runtime.ttl = ttl;
    });
  }

  updateLabels(labels: Record<string, string>): Promise<this> {
    return this.update((body) => {
      body.metadata.labels = labels;
    });
  }

  delete(): Promise<SandboxResource> {
    return Sandbox.delete(this.name, this.client);
  }

  /**
   * Polls until the sandbox reaches `status` (default DEPLOYED). Throws at once when it reaches a
   * state it cannot leave for that one (FAILED, TERMINATED...), or after `timeoutMs`.
   */
  async waitFor(
    status = 'DEPLOYED',
    options: { timeoutMs?: number; intervalMs?: number; onStatus?: (status: string) => void } = {},
  ): Promise<this> {
    const deadline = Date.now() + (options.timeoutMs ?? 120_000);
    for (;;) {
      try {
        await this.refresh();
      } catch (error) {
        if (status === 'TERMINATED' && error instanceof NotFoundError) return this;
        throw error;
      }
      options.onStatus?.(this.status);
      if (this.status === status) return this;
      if (DEAD.has(this.status) && !DEAD.has(status)) {
        const last = this.resource.events.at(-1)?.message;
        throw new TarmacError(`sandbox ${this.name} is ${this.status}${last ? `: ${last}` : ''}`);
      }
      if (Date.now() > deadline) {
        throw new TarmacTimeoutError(
          `sandbox ${this.name} is still ${this.status} after waiting for ${status}`,
        );
      }
      await sleep(options.intervalMs ?? 500);
    }
  }

  /** Fetches `path` on `port` inside the sandbox through the `/port/{n}` route. */
  fetch(port: number, path = '/', init: RequestInit = {}): Promise<Response> {
    const suffix = path.startsWith('/') ? path : `/${path}`;
    return this.http.fetch(`${this.url}/port/${port}${suffix}`, init);
  }
}
