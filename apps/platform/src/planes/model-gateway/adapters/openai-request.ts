/**
 * Reading an OpenAI chat request for the translating adapters (Anthropic, Gemini): its messages,
 * content parts and tools, each checked with a 400 naming the field when it is malformed or asks
 * for something the provider cannot do (issue 18: never silently drop what changes the answer).
 */
import { GatewayError, unsupportedField } from '../gateway-error.js';
import type { ChatBody } from './adapter.js';

export interface ToolCall {
  id: string;
  name: string;
  arguments: string;
}

export type Part =
  { type: 'text'; text: string } | { type: 'image'; url: string; mediaType?: string; data?: string };

export interface Message {
  role: 'system' | 'user' | 'assistant' | 'tool';
  parts: Part[];
  toolCalls: ToolCall[];
  toolCallId?: string;
}

export interface ToolDef {
  name: string;
  description?: string;
  parameters: Record<string, unknown>;
}

const bad = (field: string, why: string) => new GatewayError(400, `${field} ${why}`, field);
const isObj = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

function parts(content: unknown, field: string, provider: string): Part[] {
  if (content === null || content === undefined) return [];
  if (typeof content === 'string') return [{ type: 'text', text: content }];
  if (!Array.isArray(content)) throw bad(field, 'must be a string or an array of content parts');
  return content.map((p, j) => {
    const f = `${field}[${j}]`;
    if (!isObj(p)) throw bad(f, 'must be an object');
    if (p.type === 'text' && typeof p.text === 'string') return { type: 'text', text: p.text };
    if (p.type === 'image_url') {
      const url = isObj(p.image_url) ? p.image_url.url : undefined;
      if (typeof url !== 'string') throw bad(`${f}.image_url.url`, 'must be a string');
      const m = /^data:([^;,]+);base64,(.*)$/s.exec(url);
      return m ? { type: 'image', url, mediaType: m[1]!, data: m[2]! } : { type: 'image', url };
    }
    throw unsupportedField(`${f}.type`, provider, `"${String(p.type)}" is not supported`);
  });
}

export function readMessages(body: ChatBody, provider: string): Message[] {
  if (!Array.isArray(body.messages) || body.messages.length === 0)
    throw bad('messages', 'must be a non-empty array');
  return body.messages.map((raw, i): Message => {
    const f = `messages[${i}]`;
    if (!isObj(raw)) throw bad(f, 'must be an object');
    const role = raw.role === 'developer' ? 'system' : raw.role;
    if (role !== 'system' && role !== 'user' && role !== 'assistant' && role !== 'tool')
      throw bad(`${f}.role`, 'must be one of system, developer, user, assistant, tool');
    const toolCalls: ToolCall[] = [];
    if (raw.tool_calls !== undefined && raw.tool_calls !== null) {
      if (!Array.isArray(raw.tool_calls)) throw bad(`${f}.tool_calls`, 'must be an array');
      raw.tool_calls.forEach((tc, j) => {
        const fn = isObj(tc) && isObj(tc.function) ? tc.function : undefined;
        if (!isObj(tc) || typeof tc.id !== 'string' || !fn || typeof fn.name !== 'string')
          throw bad(`${f}.tool_calls[${j}]`, 'must have id and function.name');
        toolCalls.push({
          id: tc.id,
          name: fn.name,
          arguments: typeof fn.arguments === 'string' ? fn.arguments : '{}',
        });
      });
    }
    if (role === 'tool' && typeof raw.tool_call_id !== 'string')
      throw bad(`${f}.tool_call_id`, 'is required on a tool message');
    return {
      role,
      parts: parts(raw.content, `${f}.content`, provider),
      toolCalls,
      ...(role === 'tool' ? { toolCallId: raw.tool_call_id as string } : {}),
    };
  });
}

export function readTools(body: ChatBody): ToolDef[] {
  if (body.tools === undefined || body.tools === null) return [];
  if (!Array.isArray(body.tools)) throw bad('tools', 'must be an array');
  return body.tools.map((t, i) => {
    const fn = isObj(t) && isObj(t.function) ? t.function : undefined;
    if (!isObj(t) || t.type !== 'function' || !fn || typeof fn.name !== 'string')
      throw bad(`tools[${i}]`, 'must be {type: "function", function: {name, parameters}}');
    return {
      name: fn.name,
      ...(typeof fn.description === 'string' ? { description: fn.description } : {}),
      parameters: isObj(fn.parameters) ? fn.parameters : { type: 'object', properties: {} },
    };
  });
}

/** `tool_choice` as one of auto/none/required or a named function. */
export function readToolChoice(body: ChatBody): 'auto' | 'none' | 'required' | { name: string } | undefined {
  const c = body.tool_choice;
  if (c === undefined || c === null) return undefined;
  if (c === 'auto' || c === 'none' || c === 'required') return c;
  if (isObj(c) && isObj(c.function) && typeof c.function.name === 'string') return { name: c.function.name };
  throw bad('tool_choice', 'must be auto, none, required or {type: "function", function: {name}}');
}

export function stopList(body: ChatBody): string[] | undefined {
  const s = body.stop;
  if (s === undefined || s === null) return undefined;
  if (typeof s === 'string') return [s];
  if (Array.isArray(s) && s.every((x) => typeof x === 'string')) return s;
  throw bad('stop', 'must be a string or an array of strings');
}

export function maxTokens(body: ChatBody): number | undefined {
  const v = body.max_completion_tokens ?? body.max_tokens;
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'number' || !Number.isInteger(v) || v < 1)
    throw bad(
      body.max_completion_tokens !== undefined ? 'max_completion_tokens' : 'max_tokens',
      'must be a positive integer',
    );
  return v;
}

export function optionalNumber(body: ChatBody, field: string): number | undefined {
  const v = body[field];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'number') throw bad(field, 'must be a number');
  return v;
}

/**
 * Fields a translating adapter neither maps nor can ignore are refused by name. `handled` lists
 * what it maps; these never change the answer and are accepted everywhere.
 */
const HARMLESS = new Set(['model', 'stream', 'stream_options', 'user', 'metadata', 'store', 'service_tier']);

export function refuseOthers(body: ChatBody, handled: readonly string[], provider: string): void {
  for (const key of Object.keys(body)) {
    if (HARMLESS.has(key) || handled.includes(key)) continue;
    const v = body[key];
    if (v === null || v === undefined || v === false) continue;
    if (key === 'n' && v === 1) continue;
    if (key === 'logprobs' && v === false) continue;
    throw unsupportedField(key, provider);
  }
}

/** The JSON text of tool arguments as an object (providers take objects, OpenAI sends text). */
export function argsObject(text: string, field: string): Record<string, unknown> {
  try {
    const v: unknown = JSON.parse(text || '{}');
    if (isObj(v)) return v;
  } catch {
    // reported below
  }
  throw bad(field, 'must be a JSON object text');
}

export const textOf = (parts: Part[]) =>
  parts
    .filter((p): p is Extract<Part, { type: 'text' }> => p.type === 'text')
    .map((p) => p.text)
    .join('');
