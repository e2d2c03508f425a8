/**
 * In-process notice that a resource changed, so controllers reconcile at once instead of waiting
 * for their next periodic pass (ARCHITECTURE.md "Resources and the reconcile loop": handlers write
 * the desired spec; controllers react). Level-triggered: a notice carries no state, only which
 * resource to look at again, and a lost notice is repaired by the periodic pass.
 */
export interface ResourceRef {
  workspace: string;
  kind: string;
  name: string;
}

export type ChangeListener = (ref: ResourceRef) => void;

export class ChangeFeed {
  private readonly listeners = new Map<string, Set<ChangeListener>>();

  /** Listens to changes of one kind; returns the function that stops listening. */
  subscribe(kind: string, listener: ChangeListener): () => void {
    let set = this.listeners.get(kind);
    if (!set) this.listeners.set(kind, (set = new Set()));
    set.add(listener);
    return () => set.delete(listener);
  }

  publish(ref: ResourceRef): void {
    for (const listener of this.listeners.get(ref.kind) ?? []) {
      try {
        listener(ref);
      } catch {
        // A listener's failure must not break the writer; the periodic pass catches up.
      }
    }
  }
}
