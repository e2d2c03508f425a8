import { StaleRevisionError, type ResourcePatch, type ResourceRow } from '@tarmac/store';

/**
 * The one read-modify-write loop of the platform (issue 13: the controllers' record writer and
 * ResourceCollection.mutate each had their own): read the row, compute a patch from what was read,
 * write it only if nobody wrote since (the row's revision), else read again and retry. An API
 * handler writing the spec and a controller writing status therefore never lose each other's write.
 */
export interface ReadModifyWrite<Spec, Next> {
  /** The current row; undefined when it is gone (the loop then answers undefined). */
  read(): Promise<ResourceRow<Spec> | undefined>;
  /** What to write, from the row just read; undefined = nothing to write (answers the row). */
  change(row: ResourceRow<Spec>): Next | undefined | Promise<Next | undefined>;
  /** Writes conditionally on `row.revision`; throws StaleRevisionError when someone wrote since. */
  write(row: ResourceRow<Spec>, next: Next): Promise<ResourceRow<Spec>>;
  /** Writes tried before a StaleRevisionError is thrown to the caller. */
  attempts: number;
}

export async function readModifyWrite<Spec, Next>(
  op: ReadModifyWrite<Spec, Next>,
): Promise<ResourceRow<Spec> | undefined> {
  for (let attempt = 1; ; attempt++) {
    const row = await op.read();
    if (!row) return undefined;
    const next = await op.change(row);
    if (next === undefined) return row;
    try {
      return await op.write(row, next);
    } catch (err) {
      if (!(err instanceof StaleRevisionError) || attempt >= op.attempts) throw err;
    }
  }
}

/** Patch of a row by id (controllers): the store's conditional update, nothing else. */
export function patchById<Spec>(
  resources: {
    getById<S>(id: string): Promise<ResourceRow<S> | undefined>;
    update<S>(id: string, patch: ResourcePatch, expectedRevision: number): Promise<ResourceRow<S>>;
  },
  id: string,
  change: (row: ResourceRow<Spec>) => ResourcePatch | undefined,
  attempts = 8,
): Promise<ResourceRow<Spec> | undefined> {
  return readModifyWrite<Spec, ResourcePatch>({
    read: () => resources.getById<Spec>(id),
    change,
    write: (row, patch) => resources.update<Spec>(id, patch, row.revision),
    attempts,
  });
}
