import { describe, expect, it } from 'vitest';
import { DEFAULT_POOL, MAX_POOL_SIZE, parsePoolShapes } from './pool-shapes.js';

describe('TARMAC_POOL', () => {
  it('defaults to the default image and memory', () => {
    expect(parsePoolShapes(undefined)).toEqual(DEFAULT_POOL);
    expect(DEFAULT_POOL).toEqual([{ image: 'tarmac/base:latest', memoryMB: 4096, size: 2 }]);
  });

  it('is off with "off", "0" or nothing', () => {
    for (const t of ['off', '0', '', ' ']) expect(parsePoolShapes(t)).toEqual([]);
  });

  it('reads shapes and their sizes; a size of 0 drops the shape', () => {
    expect(parsePoolShapes('tarmac/base:latest@4096=3, my/img:1@512=1,x@256=0')).toEqual([
      { image: 'tarmac/base:latest', memoryMB: 4096, size: 3 },
      { image: 'my/img:1', memoryMB: 512, size: 1 },
    ]);
  });

  it('names the variable and the bad part', () => {
    expect(() => parsePoolShapes('tarmac/base:latest=2')).toThrow(/TARMAC_POOL: "tarmac\/base:latest=2"/);
    expect(() => parsePoolShapes(`a@512=${MAX_POOL_SIZE + 1}`)).toThrow(/TARMAC_POOL/);
    expect(() => parsePoolShapes('a@512=1,a@512=2')).toThrow(/listed twice/);
  });
});
