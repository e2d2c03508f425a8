import { describe, expect, it } from 'vitest';
import { runAddress } from './run-address.js';

describe('runAddress', () => {
  it('reads kind, workspace, name and forwards the rest with its query', () => {
    expect(runAddress('/acme/agents/bot')).toEqual({
      kind: 'agent',
      workspace: 'acme',
      name: 'bot',
      path: '/',
    });
    expect(runAddress('/acme/agents/bot/v1/chat?x=1')).toEqual({
      kind: 'agent',
      workspace: 'acme',
      name: 'bot',
      path: '/v1/chat?x=1',
    });
    expect(runAddress('/acme/functions/tools/mcp')).toMatchObject({ kind: 'function', path: '/mcp' });
    expect(runAddress('/acme/agents/bot?stream=1')).toMatchObject({ path: '/?stream=1' });
  });

  it('is not run traffic: management paths, other kinds, malformed names', () => {
    expect(runAddress('/v0/agents/bot')).toBeUndefined();
    expect(runAddress('/acme/models/gpt')).toBeUndefined();
    expect(runAddress('/acme/sandboxes/s1')).toBeUndefined();
    expect(runAddress('/acme/agents/')).toBeUndefined();
    expect(runAddress('/acme/agents/Bad_Name')).toBeUndefined();
    expect(runAddress('/acme/agents/../v0')).toBeUndefined();
  });

  it('a hostile sub-path stays with the agent it names: dot segments go to that replica as they are', () => {
    expect(runAddress('/acme/agents/bot/../../other/agents/x')).toEqual({
      kind: 'agent',
      workspace: 'acme',
      name: 'bot',
      path: '/../../other/agents/x',
    });
    expect(runAddress('/acme/agents/bot%2F..%2Fother')).toBeUndefined();
  });
});
