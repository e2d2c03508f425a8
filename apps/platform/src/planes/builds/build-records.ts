/**
 * What the builds plane needs of the records it builds for (the catalogue's agents, functions,
 * jobs and images), declared here and implemented by the catalogue; compose.ts hands it in
 * (apps/platform/ARCHITECTURE.md: planes meet only through interfaces).
 */
export type ImageResourceType = 'agents' | 'functions' | 'jobs' | 'sandboxes' | 'applications';

export interface BuildTarget {
  /** The record the build is for: a workload kind (`agent`, `function`, `job`) or `image`. */
  kind: 'agent' | 'function' | 'job' | 'application' | 'image';
  name: string;
  /** The image repository the build's tags go under: `{imageType}/{name}:{tag}` (reference §1.9). */
  imageType: ImageResourceType;
}

export interface BuiltImage {
  /** The workspace's ref, `{imageType}/{name}:{tag}`. */
  ref: string;
  tag: string;
  sizeBytes: number;
}

export interface BuildRecords {
  /** Moves the record to `status` with an event; throws (404) when the record is gone. */
  setStatus(
    workspace: string,
    target: BuildTarget,
    status: 'UPLOADING' | 'BUILDING' | 'FAILED',
    message: string,
  ): Promise<void>;
  /** BUILT: the image tag is registered, a workload's `spec.runtime.image` names it, a new revision. */
  built(workspace: string, actor: string, target: BuildTarget, image: BuiltImage): Promise<void>;
  exists(workspace: string, target: BuildTarget): Promise<boolean>;
  /** Whether image `{imageType}/{name}` of the workspace still lists `tag` (the GC's question). */
  tagExists(workspace: string, imageType: string, name: string, tag: string): Promise<boolean>;
  /** Records of every workspace still UPLOADING or BUILDING (what a restart must resume or fail). */
  inProgress(): Promise<Array<{ workspace: string; target: BuildTarget; status: 'UPLOADING' | 'BUILDING' }>>;
  /** `POST /v0/images?upload=true`: the image record, created UPLOADING when missing. */
  openImage(workspace: string, actor: string, imageType: ImageResourceType, name: string): Promise<void>;
}

/** What the builds plane needs of the engine's image store (the one the sandboxes run from). */
export interface BuildImageStore {
  /** The engine ref workspace `workspace`'s `ref` is stored under. */
  importTarget(workspace: string, ref: string): Promise<string>;
  /** Imports an OCI archive through the engine's vetted import; the stored size. */
  importImage(archive: string, engineRef: string): Promise<{ sizeBytes: number }>;
  /** The base image's rootfs and run settings (built on first use). */
  baseImage(): Promise<{ name: string; rootfs: string; env: string[]; workingDir: string; version: string }>;
}
