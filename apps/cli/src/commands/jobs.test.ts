import { describe, expect, it } from 'vitest';
import { ArgumentError } from '../errors.js';
import { parseTasksFile } from './jobs.js';

describe('tarmac run job --file', () => {
  it('takes an array of task objects or {"tasks": [...]}', () => {
    expect(parseTasksFile('[{"a":1},{}]')).toEqual([{ a: 1 }, {}]);
    expect(parseTasksFile('{"tasks":[{"b":2}]}')).toEqual([{ b: 2 }]);
  });

  it('refuses anything else, naming the flag', () => {
    for (const bad of ['not json', '{"x":1}', '[1,2]', '[[]]', 'null']) {
      expect(() => parseTasksFile(bad)).toThrow(ArgumentError);
      expect(() => parseTasksFile(bad)).toThrow(/--file/);
    }
  });
});
