import type { ResourceRow } from '@tarmac/store';

/**
 * Who holds a volume: `system.attachedTo` (`sandbox:<name>`, shown as `state.attachedTo`; '' when
 * free). One volume, one holder (spec "Volume"). Both writers use these: the volumes service
 * (reserve at sandbox create, free at delete) and the sandbox controller (re-assert after a
 * deploy, free once the sandbox is gone).
 */
export const sandboxHolder = (sandboxName: string): string => `sandbox:${sandboxName}`;

export function holderOf(row: Pick<ResourceRow, 'system'>): string {
  return typeof row.system.attachedTo === 'string' ? row.system.attachedTo : '';
}

/** The `system` patch that gives the volume to `holder` ('' frees it). */
export function holderPatch(
  row: Pick<ResourceRow, 'system'>,
  holder: string,
): { system: Record<string, unknown> } {
  return { system: { ...row.system, attachedTo: holder } };
}
