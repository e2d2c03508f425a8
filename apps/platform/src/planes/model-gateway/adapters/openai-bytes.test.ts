import { describe, expect, it } from 'vitest';
import type { ChatBody } from './adapter.js';
import { rawChatBody, usageOfAnswer } from './openai-bytes.js';

/** What goes upstream for `text` (the caller's body): the splice, or the serialised fallback. */
function upstreamBody(text: string, model: string, stream = false): { sent: unknown; spliced: boolean } {
  const body = JSON.parse(text) as ChatBody;
  const raw = Buffer.from(text);
  const out = rawChatBody(raw, body, model, stream);
  return { sent: out ? JSON.parse(out.toString('utf8')) : undefined, spliced: out !== undefined };
}

describe('rawChatBody (the caller body, with model and usage spliced in)', () => {
  it('sends the caller bytes unchanged when they already name the upstream model', () => {
    const raw = Buffer.from('{"model":"gpt","messages":[{"role":"user","content":"hi"}]}');
    const body = JSON.parse(raw.toString()) as ChatBody;
    expect(rawChatBody(raw, body, 'gpt', false)).toBe(raw);
  });

  it('replaces the top-level model, keeping every other byte', () => {
    const text =
      '{ "messages" : [{"role":"user","content":"say \\"hi\\"\\n"}], "model" : "caller-name", "n":1 }';
    const { sent, spliced } = upstreamBody(text, 'gpt-4o-mini');
    expect(spliced).toBe(true);
    expect(sent).toEqual({ ...(JSON.parse(text) as object), model: 'gpt-4o-mini' });
  });

  it('adds stream_options.include_usage when streaming without it', () => {
    const { sent } = upstreamBody('{"model":"x","stream":true,"messages":[]}', 'gpt', true);
    expect(sent).toEqual({
      model: 'gpt',
      stream: true,
      messages: [],
      stream_options: { include_usage: true },
    });
    const kept = upstreamBody(
      '{"model":"gpt","stream":true,"stream_options":{"include_usage":true},"messages":[]}',
      'gpt',
      true,
    );
    expect(kept.sent).toEqual({
      model: 'gpt',
      stream: true,
      stream_options: { include_usage: true },
      messages: [],
    });
  });

  it('falls back to serialising when the splice cannot be proven exact', () => {
    // stream_options without include_usage: rewritten whole.
    expect(upstreamBody('{"model":"x","stream":true,"stream_options":{}}', 'gpt', true).spliced).toBe(false);
    // "model" twice (a message's role, a nested key): which one is top-level is not known.
    expect(upstreamBody('{"model":"x","messages":[{"role":"model"}]}', 'gpt').spliced).toBe(false);
    // A \u escape anywhere: a key could be spelt with one.
    expect(upstreamBody('{"model":"x","messages":[{"content":"caf\\u00e9"}]}', 'gpt').spliced).toBe(false);
    // No model, or not a string.
    expect(upstreamBody('{"messages":[]}', 'gpt').spliced).toBe(false);
    expect(upstreamBody('{"model":7,"messages":[]}', 'gpt').spliced).toBe(false);
  });

  it('never passes on a duplicate key the gateway decides on (attack: a parser that takes the first)', () => {
    // JSON.parse takes the last "model"; a provider taking the first would bill the costly one.
    const dup = '{"model":"gpt-4-expensive","model":"gpt","messages":[]}';
    expect(rawChatBody(Buffer.from(dup), JSON.parse(dup) as ChatBody, 'gpt', false)).toBeUndefined();
    // Usage asked for last, refused first: a first-wins provider would stream without usage.
    for (const text of [
      '{"model":"gpt","stream":true,"stream_options":{"include_usage":false},"stream_options":{"include_usage":true}}',
      '{"model":"gpt","stream":true,"stream_options":{"include_usage":false,"include_usage":true}}',
      '{"model":"gpt","stream":false,"stream":true,"stream_options":{"include_usage":true}}',
    ])
      expect(rawChatBody(Buffer.from(text), JSON.parse(text) as ChatBody, 'gpt', true)).toBeUndefined();
  });

  it('never lets a caller pick another upstream model (attack: an escaped top-level key, a decoy)', () => {
    // The top-level key is spelt with an escape; the only plain "model" is a decoy in metadata.
    const text = '{"mod\\u0065l":"gpt-4-expensive","metadata":{"model":"gpt"},"messages":[]}';
    const body = JSON.parse(text) as ChatBody;
    expect(body.model).toBe('gpt-4-expensive');
    expect(rawChatBody(Buffer.from(text), body, 'gpt', false)).toBeUndefined();
    // A decoy inside a string, after an escaped quote: `\"model":"gpt"` in a message.
    const inString = '{"model":"gpt-4-expensive","messages":[{"content":"a \\"model\\":\\"gpt\\""}]}';
    const out = rawChatBody(Buffer.from(inString), JSON.parse(inString) as ChatBody, 'gpt', false);
    expect(out && (JSON.parse(out.toString()) as { model: string }).model).toBe('gpt');
    // A string ending in an escaped quote and `model`: the text "model" twice, so no splice.
    const tail = '{"model":"gpt-4-expensive","messages":[{"content":"x \\"model"}]}';
    expect(rawChatBody(Buffer.from(tail), JSON.parse(tail) as ChatBody, 'gpt', false)).toBeUndefined();
  });
});

describe('usageOfAnswer (usage without parsing the answer)', () => {
  const answer = (tail: string) =>
    Buffer.from(
      `{"id":"c","object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":"the \\"usage\\": {} is"}}],${tail}`,
    );

  it('reads the top-level usage object, nested details included', () => {
    expect(
      usageOfAnswer(
        answer(
          '"usage":{"prompt_tokens":9,"completion_tokens":3,"total_tokens":12,"prompt_tokens_details":{"cached_tokens":0}},"system_fingerprint":"fp"}',
        ),
      ),
    ).toEqual({ prompt: 9, completion: 3, total: 12 });
    // Members after usage that open and close objects (Groq's x_groq).
    expect(
      usageOfAnswer(answer('"usage":{"prompt_tokens":1,"completion_tokens":2},"x_groq":{"id":"r"}}')),
    ).toEqual({ prompt: 1, completion: 2, total: 3 });
  });

  it('takes the top-level usage, not a nested one written after it', () => {
    const text =
      '{"usage":{"prompt_tokens":5,"completion_tokens":5},"choices":[{"message":{"content":"x"},"extra":{"usage":{"prompt_tokens":999,"completion_tokens":999}}}]}';
    expect(usageOfAnswer(Buffer.from(text))).toEqual({ prompt: 5, completion: 5, total: 10 });
  });

  it('is undefined without usage or for an answer that is not JSON', () => {
    expect(usageOfAnswer(answer('"usage":null}'))).toBeUndefined();
    expect(usageOfAnswer(Buffer.from('{"choices":[]}'))).toBeUndefined();
    expect(usageOfAnswer(Buffer.from('<html>"usage":{"prompt_tokens":1}'))).toBeUndefined();
  });
});
