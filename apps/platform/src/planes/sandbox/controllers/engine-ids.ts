/**
 * Engine names of sandboxes and volumes, derived from the record id: stable across restarts (no
 * extra write before the container exists), unique on the host even when several platforms share
 * its runc root and bridge, and always valid engine ids (lowercase hex, short enough for netns
 * and cgroup names).
 */
import { createHash } from 'node:crypto';

const digest = (id: string) => createHash('sha256').update(id).digest('hex').slice(0, 24);

export const sandboxEngineId = (recordId: string) => `sb-${digest(recordId)}`;
export const volumeEngineName = (recordId: string) => `vol-${digest(recordId)}`;
