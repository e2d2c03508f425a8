/**
 * The OpenAI family's request and answer as bytes (issue 18 throughput goal: ≥ 0.8× the direct
 * requests/s at 64 clients, bench/model-gateway.ts). The body is still parsed once (it must be
 * JSON: a 400 otherwise), but it is not written again: it goes upstream as the caller sent it, with
 * only `model` (and, streaming, `stream_options`) spliced in; and the answer goes back as the
 * provider sent it, with only its `usage` object parsed. Each shortcut proves it edits the
 * top-level field and falls back to the full parse/serialise path (`undefined`) otherwise.
 */
import type { ChatBody, Usage } from './adapter.js';
import { readUsage } from './adapter.js';

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;
const COLON = 0x3a;
const COMMA = 0x2c;

const isSpace = (b: number | undefined) => b === 0x20 || b === 0x0a || b === 0x0d || b === 0x09;

function skipSpace(buf: Buffer, i: number): number {
  while (isSpace(buf[i])) i++;
  return i;
}

/** Index just past the JSON string starting at `i` (a quote), or -1. */
function stringEnd(buf: Buffer, i: number): number {
  for (let j = i + 1; j < buf.length; j++) {
    const b = buf[j];
    if (b === BACKSLASH) j++;
    else if (b === QUOTE) return j + 1;
  }
  return -1;
}

/**
 * The request body for the provider: `raw` itself when it already names `model` and (streaming)
 * asks for usage; else `raw` with those spliced in; undefined when the bytes cannot be proven to
 * say what the parse says (then the caller serialises `body` again).
 *
 * The proof: no `\u` escape anywhere, so every key is written plainly, and the keys the gateway
 * decides on — `model` (which model the platform's key pays for), `stream`, `stream_options`,
 * `include_usage` (whether usage is exact) — each written at most once. A duplicate key is read as
 * the last by JSON.parse but as the first by some providers' parsers: `{"model":"costly",
 * "model":"cheap"}` must not reach a provider as it was sent.
 */
export function rawChatBody(
  raw: Buffer,
  body: ChatBody,
  model: string,
  forceUsage: boolean,
): Buffer | undefined {
  if (raw.indexOf(ESCAPE) >= 0 || !PINNED_KEYS.every((key) => atMostOnce(raw, key))) return undefined;
  const so = body.stream_options as { include_usage?: unknown } | undefined;
  const addUsage = forceUsage && so?.include_usage !== true;
  // stream_options present but without include_usage: rewrite it whole (the slow path).
  if (addUsage && so !== undefined) return undefined;
  let out = raw;
  if (body.model !== model) {
    if (typeof body.model !== 'string') return undefined;
    const value = modelValue(raw, body.model);
    if (!value) return undefined;
    out = Buffer.concat([
      raw.subarray(0, value.start),
      Buffer.from(JSON.stringify(model)),
      raw.subarray(value.end),
    ]);
  }
  if (addUsage) {
    // The body is an object with at least `stream` in it: the new first member needs a comma.
    const open = skipSpace(out, 0);
    if (out[open] !== OPEN_BRACE) return undefined;
    out = Buffer.concat([out.subarray(0, open + 1), STREAM_OPTIONS, out.subarray(open + 1)]);
  }
  return out;
}

const ESCAPE = Buffer.from('\\u');
const MODEL_KEY = Buffer.from('"model"');
const PINNED_KEYS = ['"model"', '"stream"', '"stream_options"', '"include_usage"'].map((k) => Buffer.from(k));
const USAGE_KEY = Buffer.from('"usage"');
const STREAM_OPTIONS = Buffer.from('"stream_options":{"include_usage":true},');

function atMostOnce(buf: Buffer, text: Buffer): boolean {
  const at = buf.indexOf(text);
  return at < 0 || buf.indexOf(text, at + text.length) < 0;
}

/**
 * Where the top-level `model` string's value lies in `raw`, which `rawChatBody` proved writes the
 * key plainly and once: the one occurrence of `"model"` is that key (as a value, or inside a string
 * after an escaped quote, it would be a second occurrence). The value must read back as parsed.
 */
function modelValue(raw: Buffer, parsed: string): { start: number; end: number } | undefined {
  const at = raw.indexOf(MODEL_KEY);
  if (at < 0) return undefined;
  let i = skipSpace(raw, at + MODEL_KEY.length);
  if (raw[i] !== COLON) return undefined;
  i = skipSpace(raw, i + 1);
  if (raw[i] !== QUOTE) return undefined;
  const end = stringEnd(raw, i);
  if (end < 0) return undefined;
  try {
    if (JSON.parse(raw.toString('utf8', i, end)) !== parsed) return undefined;
  } catch {
    return undefined;
  }
  return { start: i, end };
}

/**
 * The `usage` of an OpenAI answer without parsing the answer: the last `"usage"` key, its object,
 * and proof that it is a top-level member (the text after it closes exactly one object). Falls back
 * to parsing the whole answer; undefined when there is no usage (or the answer is not JSON).
 */
export function usageOfAnswer(buf: Buffer): Usage | undefined {
  const at = buf.lastIndexOf(USAGE_KEY);
  if (at < 0) return undefined; // a JSON answer with a usage member has this text
  const quick = topLevelObjectAt(buf, at);
  if (quick) {
    try {
      return readUsage(JSON.parse(buf.toString('utf8', quick.start, quick.end)));
    } catch {
      // fall back to the whole answer
    }
  }
  try {
    return readUsage((JSON.parse(buf.toString('utf8')) as { usage?: unknown }).usage);
  } catch {
    return undefined;
  }
}

/** The object value of the key at `at` when that key is a member of the top-level object. */
function topLevelObjectAt(buf: Buffer, at: number): { start: number; end: number } | undefined {
  const before = buf[skipBack(buf, at - 1)];
  if (before !== COMMA && before !== OPEN_BRACE) return undefined;
  let i = skipSpace(buf, at + 7);
  if (buf[i] !== COLON) return undefined;
  i = skipSpace(buf, i + 1);
  if (buf[i] !== OPEN_BRACE) return undefined;
  const end = valueEnd(buf, i);
  if (end < 0 || !closesOne(buf, end)) return undefined;
  return { start: i, end };
}

function skipBack(buf: Buffer, i: number): number {
  while (i >= 0 && isSpace(buf[i])) i--;
  return i;
}

/** Index just past the object or array starting at `i`, or -1. */
function valueEnd(buf: Buffer, i: number): number {
  let depth = 0;
  for (let j = i; j < buf.length; j++) {
    const b = buf[j];
    if (b === QUOTE) {
      j = stringEnd(buf, j) - 1;
      if (j < 0) return -1;
    } else if (b === OPEN_BRACE || b === OPEN_BRACKET) depth++;
    else if (b === CLOSE_BRACE || b === CLOSE_BRACKET) {
      if (--depth === 0) return j + 1;
    }
  }
  return -1;
}

/**
 * Whether the text from `i` to the end closes exactly one object — the one the value at `i` is a
 * member of — with anything it opens on the way (e.g. Groq's `x_groq` member) closed again.
 */
function closesOne(buf: Buffer, i: number): boolean {
  let level = 0;
  for (let j = i; j < buf.length; j++) {
    const b = buf[j];
    if (b === QUOTE) {
      j = stringEnd(buf, j) - 1;
      if (j < 0) return false;
    } else if (b === OPEN_BRACE || b === OPEN_BRACKET) level++;
    else if (b === CLOSE_BRACE || b === CLOSE_BRACKET) {
      level--;
      if (level === -1 && (b !== CLOSE_BRACE || skipSpace(buf, j + 1) !== buf.length)) return false;
    }
  }
  return level === -1;
}
