/**
 * What the sandbox plane needs of workspace images (issue 19 item 2: images belong to a
 * workspace). The catalogue plane owns image records and the engine-ref naming
 * (planes/catalogue/images/workspace-images.ts); compose.ts hands that in as this interface, so the
 * sandbox plane never imports another plane.
 */
import type { LocalEngine } from '@tarmac/engine';

export interface SandboxImages {
  /** The engine ref an import of `ref` into `workspace` is stored under. */
  importTarget(workspace: string, ref: string): Promise<string>;
  /** The engine ref `spec.runtime.image` names in `workspace`; undefined when none it may use. */
  resolve(workspace: string, ref: string): Promise<string | undefined>;
  /** The ref as the workspace wrote it, from an engine ref (responses never show the namespace). */
  displayRef(engineRef: string): string;
  /** Moves images of the older, global layout into their workspaces (once, before controllers). */
  adoptLegacy(engineImages: LocalEngine['images']): Promise<void>;
}
