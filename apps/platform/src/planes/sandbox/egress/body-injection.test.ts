import { describe, expect, it } from 'vitest';
import { injectBody, injectHeaders } from './body-injection.js';
import { renderSecrets, referencedSecrets } from '../records/secret-template.js';

const rule = {
  destinations: ['x'],
  headers: { Authorization: 'Bearer {{SECRET:k}}' },
  body: '{"api_key":"{{SECRET:k}}","nested":{"v":"{{SECRET:q}}"}}',
  secrets: { k: 'se"cret', q: 'two' },
};

describe('secret templates', () => {
  it('lists and renders tokens', () => {
    expect(referencedSecrets('a {{SECRET:x}} b {{SECRET:y-z}}')).toEqual(['x', 'y-z']);
    expect(renderSecrets('{{SECRET:x}}/{{SECRET:x}}', { x: '1' })).toBe('1/1');
  });
});

describe('injection', () => {
  it('replaces same-named headers whatever their case', () => {
    expect(injectHeaders({ authorization: 'Bearer fake', accept: '*/*' }, rule)).toEqual({
      authorization: 'Bearer se"cret',
      accept: '*/*',
    });
  });

  it('merges fields into a JSON object body, secrets rendered as JSON strings', () => {
    const out = injectBody('POST', Buffer.from('{"prompt":"hi","api_key":"placeholder"}'), rule);
    expect(JSON.parse(String(out))).toEqual({ prompt: 'hi', api_key: 'se"cret', nested: { v: 'two' } });
  });

  it('an empty POST body becomes the rule body; a non-JSON body is replaced; GET stays empty', () => {
    expect(JSON.parse(String(injectBody('POST', Buffer.alloc(0), rule)))).toEqual({
      api_key: 'se"cret',
      nested: { v: 'two' },
    });
    expect(JSON.parse(String(injectBody('PUT', Buffer.from('a=b'), rule)))).toMatchObject({
      api_key: 'se"cret',
    });
    expect(injectBody('GET', Buffer.alloc(0), rule)).toBeUndefined();
    expect(injectBody('POST', Buffer.from('x'), { ...rule, body: undefined })).toBeUndefined();
  });
});
