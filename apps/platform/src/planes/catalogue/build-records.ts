import { randomBytes } from 'node:crypto';
import { ResourceCollection, type CollectionDeps } from '../../framework/collection.js';
import { newEvent } from '../../framework/events.js';
import { IMAGE_KIND, imageKey, type StoredImageSpec, type StoredTag } from './images/image-rows.js';
import { revisionContent, type StoredRevision } from './workloads/revision-traffic.js';

/**
 * The catalogue's side of builds (issue 15): status writes of the records a build is for, and the
 * result of a good build — the image tag on the image record (so `/v0/images` lists it with its
 * real size), `spec.runtime.image` of the workload naming it, and a new revision. A failed build
 * changes only the status: the previous image and revision stay (issue 15 "a failed build leaves
 * the previous revision serving"). compose.ts hands this to the builds plane as its BuildRecords.
 */
type Kind = 'agent' | 'function' | 'job' | 'application' | 'image';
interface Target {
  kind: Kind;
  name: string;
  imageType: 'agents' | 'functions' | 'jobs' | 'sandboxes' | 'applications';
}
/** What an application row stores (applications.service.ts): the image and revisions at the top. */
interface ApplicationStored {
  image?: string;
  envs?: unknown[];
  memory?: number;
  port?: number;
  revision?: Record<string, unknown>;
  revisions?: unknown[];
}
interface RuntimeSpec {
  runtime?: Record<string, unknown>;
  integrationConnections?: string[];
  revision?: { active?: string };
}
const LABELS: Record<Kind, string> = {
  agent: 'Agent',
  function: 'Function',
  job: 'Job',
  application: 'Application',
  image: 'Image',
};
const MAX_REVISIONS = 20;

export class CatalogueBuildRecords {
  constructor(private readonly deps: CollectionDeps) {}

  private rows(t: Target) {
    return new ResourceCollection<RuntimeSpec & StoredImageSpec>(
      this.deps,
      t.kind === 'image' ? IMAGE_KIND : t.kind,
      LABELS[t.kind],
    );
  }

  private key(t: Target): string {
    return t.kind === 'image' ? imageKey(t.imageType, t.name) : t.name;
  }

  async exists(workspace: string, t: Target): Promise<boolean> {
    return (await this.rows(t).find(workspace, this.key(t))) !== undefined;
  }

  async tagExists(workspace: string, imageType: string, name: string, tag: string): Promise<boolean> {
    const row = await this.deps.store.resources.get<StoredImageSpec>(
      workspace,
      IMAGE_KIND,
      imageKey(imageType, name),
    );
    return !!row && !row.terminatedAt && row.spec.tags.some((t) => t.name === tag);
  }

  async inProgress(): Promise<
    Array<{ workspace: string; target: Target; status: 'UPLOADING' | 'BUILDING' }>
  > {
    const out: Array<{ workspace: string; target: Target; status: 'UPLOADING' | 'BUILDING' }> = [];
    for (const kind of Object.keys(LABELS) as Kind[]) {
      const rows = await this.deps.store.resources.listByKind(kind === 'image' ? IMAGE_KIND : kind, {
        status: ['UPLOADING', 'BUILDING'],
      });
      for (const row of rows) {
        const status = row.status as 'UPLOADING' | 'BUILDING';
        if (kind !== 'image') {
          out.push({
            workspace: row.workspace,
            status,
            target: { kind, name: row.name, imageType: `${kind}s` },
          });
          continue;
        }
        const slash = row.name.indexOf('/'); // imageKey: `{imageType}/{name}`
        const imageType = row.name.slice(0, slash) as Target['imageType'];
        out.push({
          workspace: row.workspace,
          status,
          target: { kind, imageType, name: row.name.slice(slash + 1) },
        });
      }
    }
    return out;
  }

  async setStatus(workspace: string, t: Target, status: string, message: string): Promise<void> {
    await this.rows(t).mutate(workspace, this.key(t), 'builds', async (row) => ({
      patch: { status },
      event: newEvent(row, 'build', status, message, this.deps.now()),
    }));
  }

  async openImage(
    workspace: string,
    actor: string,
    imageType: Target['imageType'],
    name: string,
  ): Promise<void> {
    const rows = this.rows({ kind: 'image', imageType, name });
    if (await rows.find(workspace, imageKey(imageType, name))) return;
    await rows.create({
      workspace,
      name: imageKey(imageType, name),
      actor,
      displayName: null,
      externalId: null,
      labels: {},
      spec: { tags: [] },
      status: 'UPLOADING',
      event: newEvent(undefined, 'build', 'UPLOADING', 'Waiting for the code upload', this.deps.now()),
    });
  }

  async built(
    workspace: string,
    actor: string,
    t: Target,
    image: { ref: string; tag: string; sizeBytes: number },
  ): Promise<void> {
    const now = this.deps.now();
    const at = now.toISOString();
    const tag: StoredTag = {
      name: image.tag,
      size: image.sizeBytes,
      createdAt: at,
      updatedAt: at,
      source: image.ref,
    };
    const imageTarget: Target = { kind: 'image', imageType: t.imageType, name: t.name };
    await this.openImage(workspace, actor, t.imageType, t.name);
    await this.rows(imageTarget).mutate(workspace, this.key(imageTarget), actor, async (row) => ({
      patch: {
        spec: { ...row.spec, tags: [...(row.spec.tags ?? []).filter((x) => x.name !== tag.name), tag] },
        status: 'BUILT',
      },
      event: newEvent(row, 'build', 'BUILT', `Tag ${image.tag} built (${image.sizeBytes} bytes)`, now),
    }));
    if (t.kind === 'image') return;
    if (t.kind === 'application') return this.builtApplication(workspace, actor, t.name, image.ref, now);
    await this.rows(t).mutate(workspace, t.name, actor, async (row) => {
      const revisions = (row.system.revisions as unknown[] | undefined) ?? [];
      const spec = { ...row.spec, runtime: { ...row.spec.runtime, image: image.ref } };
      const revision: StoredRevision = {
        id: randomBytes(6).toString('hex'),
        createdAt: at,
        createdBy: actor,
        image: image.ref,
        // What the revision runs, so it can run again as active or canary (revision-traffic.ts).
        ...(t.kind === 'job' ? {} : { content: revisionContent(spec) }),
      };
      return {
        patch: {
          spec,
          status: 'BUILT',
          system: { ...row.system, revisions: [revision, ...revisions].slice(0, MAX_REVISIONS) },
        },
        event: newEvent(
          row,
          'build',
          'BUILT',
          builtMessage(t.kind, image.ref, revision.id, row.spec.revision?.active),
          now,
        ),
      };
    });
  }

  /**
   * An application names its image at `spec.image` and keeps AppRevisions (reference §1.5:
   * `{id, image, envs, memory, port, createdAt, createdBy}`); the new one becomes the active one,
   * as a create or update without an explicit choice makes it (applications.service.ts).
   */
  private async builtApplication(
    workspace: string,
    actor: string,
    name: string,
    ref: string,
    now: Date,
  ): Promise<void> {
    const rows = new ResourceCollection<ApplicationStored>(this.deps, 'application', 'Application');
    await rows.mutate(workspace, name, actor, async (row) => {
      const spec = row.spec;
      const revision = {
        id: randomBytes(6).toString('hex'),
        image: ref,
        envs: spec.envs ?? [],
        memory: spec.memory ?? 2048,
        port: spec.port ?? 8080,
        createdAt: now.toISOString(),
        createdBy: actor,
      };
      return {
        patch: {
          spec: {
            ...spec,
            image: ref,
            revision: { ...spec.revision, active: revision.id },
            revisions: [revision, ...(spec.revisions ?? [])].slice(0, MAX_REVISIONS),
          },
          status: 'BUILT',
        },
        // The run plane deploys applications too (issue 16): the new active revision's replica.
        event: newEvent(row, 'build', 'BUILT', builtMessage('application', ref, revision.id), now),
      };
    });
  }
}

/** What happens to a built image next, by kind (the run plane deploys agents and functions). */
function builtMessage(kind: string, ref: string, revision: string, pinned?: string): string {
  if (kind === 'job') return `Built image ${ref}; new executions run it`;
  // spec.revision.active names the serving revision: the new one takes no traffic until chosen.
  if (pinned)
    return `Built image ${ref} as revision ${revision}; spec.revision.active keeps ${pinned} serving`;
  return `Built image ${ref}; revision ${revision} starts a replica of it`;
}
