import { describe, expect, it } from 'vitest';
import { interpolate, parseDocuments } from './apply-docs.js';

describe('interpolate', () => {
  it('replaces ${VAR} and ${VAR:default}, and refuses unset variables without a default', () => {
    expect(interpolate('a ${X} b ${Y:def} c ${Z:}', { X: '1' })).toBe('a 1 b def c ');
    expect(interpolate('${X:fallback}', { X: 'set' })).toBe('set');
    expect(() => interpolate('name: ${MISSING}', {})).toThrow(/MISSING.*not set/);
  });
});

describe('parseDocuments', () => {
  it('reads every document of a multi-document file, skipping empty ones', () => {
    const docs = parseDocuments(
      'apiVersion: tarmac/v1\nkind: Sandbox\nmetadata: {name: a}\nspec: {runtime: {memory: 256}}\n---\n---\nkind: Workspace\nmetadata:\n  name: b\n',
      'f.yaml',
    );
    expect(docs.map((d) => [d.kind, d.metadata.name])).toEqual([
      ['Sandbox', 'a'],
      ['Workspace', 'b'],
    ]);
    expect(docs[0]?.spec).toEqual({ runtime: { memory: 256 } });
  });

  it('names the file and document of a problem', () => {
    expect(() => parseDocuments('kind: Sandbox\n---\nkind: Agent\nmetadata: {}\n', 'x.yaml')).toThrow(
      'x.yaml document 1: missing "metadata.name"',
    );
    expect(() => parseDocuments('metadata: {name: a}\n', 'y.yaml')).toThrow(
      'y.yaml document 1: missing "kind"',
    );
    expect(() => parseDocuments('kind: [unclosed\n', 'z.yaml')).toThrow(/^z.yaml document 1:/);
  });
});
