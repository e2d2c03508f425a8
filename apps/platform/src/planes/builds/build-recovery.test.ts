// What a restart finds of the last run's builds (build-recovery.ts): a folder with its source and a
// whole build.json resumes, oldest first; a torn or foreign file, a missing source or a folder whose
// name is not its build's id is a leftover to remove.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { leftBuilds, persistBuild, restartFailure, type PersistedBuild } from './build-recovery.js';

describe('leftBuilds', () => {
  const work = mkdtempSync(join(tmpdir(), 'build-recovery-'));
  afterAll(() => rmSync(work, { recursive: true, force: true }));

  const build = (id: string, receivedAt: number): PersistedBuild => ({
    id,
    workspace: 'ws',
    actor: 'u',
    target: { kind: 'agent', name: `a-${id}`, imageType: 'agents' },
    receivedAt,
  });
  const folder = (name: string, withSource = true) => {
    const dir = join(work, name);
    mkdirSync(withSource ? join(dir, 'src') : dir, { recursive: true });
    return dir;
  };

  it('resumes whole builds oldest first and calls everything else a leftover', () => {
    persistBuild(folder('bbb'), build('bbb', 2000));
    persistBuild(folder('aaa'), build('aaa', 1000));
    persistBuild(folder('nosrc', false), build('nosrc', 500)); // extraction never finished
    persistBuild(folder('renamed'), build('other-id', 400));
    writeFileSync(join(folder('torn'), 'build.json'), '{"id":"torn","workspace":'); // crash mid-write
    writeFileSync(
      join(folder('wrong'), 'build.json'),
      JSON.stringify({ ...build('wrong', 1), target: null }),
    );
    folder('partial-upload', false); // a PUT in flight when the process died
    const { resumable, stale } = leftBuilds(work);
    expect(resumable.map((b) => b.id)).toEqual(['aaa', 'bbb']);
    expect(resumable[0]!.dir).toBe(join(work, 'aaa'));
    expect(stale.map((d) => d.slice(work.length + 1)).sort()).toEqual([
      'nosrc',
      'partial-upload',
      'renamed',
      'torn',
      'wrong',
    ]);
  });

  it('has nothing to say about a work folder that does not exist', () => {
    expect(leftBuilds(join(work, 'missing'))).toEqual({ resumable: [], stale: [] });
  });

  it('says why a record is FAILED after a restart', () => {
    expect(restartFailure('UPLOADING')).toMatch(/before the code upload arrived.*Upload again/);
    expect(restartFailure('BUILDING')).toMatch(/source was not kept.*Upload again/);
  });
});
