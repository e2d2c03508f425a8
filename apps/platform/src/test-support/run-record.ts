/**
 * A run-plane record for unit tests (planes/run): a deployed, private agent `a` in workspace `ws`
 * at revision `r1`; tests override what they are about.
 */
import type { RunRecord } from '../planes/run/run-ports.js';

export function runRecord(over: Partial<RunRecord> = {}): RunRecord {
  return {
    id: 'rec',
    kind: 'agent',
    workspace: 'ws',
    name: 'a',
    status: 'DEPLOYED',
    enabled: true,
    public: false,
    image: 'agents/a:1',
    memoryMB: 256,
    port: 8080,
    hosts: [],
    minScale: 0,
    maxScale: 3,
    revision: 'r1',
    lastMessage: undefined,
    ...over,
  };
}
