import { describe, expect, it } from 'vitest';
import {
  recordOfReplicaCredential,
  replicaContainerSpec,
  replicaCredentialId,
  replicaEngineId,
} from './replica-container.js';
import { backoffMs } from './replica-sets.js';
import type { RunRecord } from './run-ports.js';

const record: RunRecord = {
  id: '0f4c2a9e-1b2c-4d5e-8f90-123456789abc',
  kind: 'function',
  workspace: 'acme',
  name: 'tools',
  status: 'DEPLOYING',
  enabled: true,
  public: false,
  image: 'functions/tools:b1',
  memoryMB: 512,
  port: 8080,
  hosts: [],
  minScale: 0,
  maxScale: 10,
  revision: 'a1b2c3d4e5f6',
  lastMessage: undefined,
};

describe('replica container', () => {
  it('sets the contract env last: a user env cannot move PORT/HOST (reference §5.1 reserved)', () => {
    const spec = replicaContainerSpec({
      engineId: 'rp-x',
      record,
      image: 'ws-1/functions/tools:b1',
      slot: 0,
      env: { PORT: '1', HOST: '::1', API_TOKEN: 's', HTTP_PROXY: 'mine' },
      defaults: { env: { HTTP_PROXY: 'http://proxy', API_TOKEN: 'lower' }, files: [] },
    });
    expect(spec.env).toMatchObject({
      PORT: '8080',
      BL_SERVER_PORT: '8080',
      HOST: '0.0.0.0',
      BL_SERVER_HOST: '0.0.0.0',
      BL_WORKSPACE: 'acme',
      BL_NAME: 'tools',
      BL_TYPE: 'function',
      API_TOKEN: 's',
      HTTP_PROXY: 'mine',
    });
    expect(spec.command).toEqual([]); // the image's Entrypoint + Cmd
    expect(spec.memoryMB).toBe(512);
    // The orphan reaper keeps containers whose record exists; the controller adopts by these.
    expect(spec.labels).toMatchObject({ record: record.id, revision: record.revision, runKind: 'function' });
  });

  it('an application listens on its spec.port: PORT is that, and the label a restart re-reads', () => {
    const app: RunRecord = {
      ...record,
      kind: 'application',
      name: 'web',
      port: 3000,
      hosts: ['a.example.com'],
    };
    const spec = replicaContainerSpec({
      engineId: 'rp-y',
      record: app,
      image: 'ws-1/applications/web:b1',
      slot: 0,
      env: { PORT: '8080' },
      defaults: { env: {}, files: [] },
    });
    expect(spec.env).toMatchObject({ PORT: '3000', BL_SERVER_PORT: '3000', BL_TYPE: 'application' });
    expect(spec.labels).toMatchObject({ runKind: 'application', port: '3000' });
  });

  it('engine ids are valid, stable and distinct per revision, slot and attempt', () => {
    const id = replicaEngineId(record.id, record.revision, 0, 1);
    expect(id).toMatch(/^rp-[0-9a-f]{12}-[a-z0-9]{1,12}-0-1$/);
    expect(id.length).toBeLessThanOrEqual(63);
    expect(replicaEngineId(record.id, record.revision, 0, 1)).toBe(id);
    expect(replicaEngineId(record.id, 'other', 0, 1)).not.toBe(id);
    expect(replicaEngineId(record.id, record.revision, 0, 2)).not.toBe(id);
    expect(replicaEngineId(record.id, '../../etc', 0, 1)).toMatch(/^rp-[0-9a-f]{12}-etc-0-1$/);
  });

  it("a replica's egress identity names its record, and nothing else reads as one", () => {
    expect(recordOfReplicaCredential(replicaCredentialId(record.id, 0))).toBe(record.id);
    expect(recordOfReplicaCredential(`${record.id}.0`)).toBeUndefined(); // a job task's
    expect(recordOfReplicaCredential(record.id)).toBeUndefined(); // a sandbox's
  });

  it('crash-loop backoff doubles from 1 s and stops at 30 s', () => {
    expect([1, 2, 3, 4, 5, 6, 7, 20].map(backoffMs)).toEqual([
      1000, 2000, 4000, 8000, 16000, 30000, 30000, 30000,
    ]);
  });
});
