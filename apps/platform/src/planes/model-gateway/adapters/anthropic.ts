/**
 * Anthropic's Messages API (issue 18), translated both ways: OpenAI chat request → `POST
 * {base}/v1/messages` (`x-api-key`, `anthropic-version`), the message → a chat completion, and the
 * SSE events (`message_start`, `content_block_start|delta|stop`, `message_delta`, `message_stop`,
 * `ping`, `error`) → chat completion chunks, tool use included (a `tool_use` block is a tool call;
 * its `input_json_delta`s are the call's argument deltas). Base URL: the host root, as Anthropic's
 * SDK takes it (`https://api.anthropic.com`).
 */
import { readUsage, jsonError, joinUrl } from './adapter.js';
import type { Adapter, ChatBody, ChatCall, ResolvedModel, StreamTranslator, Usage } from './adapter.js';
import {
  argsObject,
  maxTokens,
  optionalNumber,
  readMessages,
  readToolChoice,
  readTools,
  refuseOthers,
  stopList,
  textOf,
  type Part,
} from './openai-request.js';
import { unsupportedField } from '../gateway-error.js';

const NAME = 'anthropic';
export const ANTHROPIC_VERSION = '2023-06-01';
/** Anthropic requires max_tokens; OpenAI does not. Used when the caller sets none. */
export const ANTHROPIC_DEFAULT_MAX_TOKENS = 4096;

const HANDLED = [
  'messages',
  'max_tokens',
  'max_completion_tokens',
  'temperature',
  'top_p',
  'stop',
  'tools',
  'tool_choice',
  'parallel_tool_calls',
  'response_format',
];

function headers(m: ResolvedModel): Record<string, string> {
  const h: Record<string, string> = {
    'content-type': 'application/json',
    'anthropic-version': m.config.apiVersion ?? ANTHROPIC_VERSION,
  };
  if (m.apiKey) h['x-api-key'] = m.apiKey;
  if (m.config.beta) h['anthropic-beta'] = m.config.beta;
  return h;
}

type Block = Record<string, unknown>;

function blocks(parts: Part[]): Block[] {
  return parts.map((p) => {
    if (p.type === 'text') return { type: 'text', text: p.text };
    return p.data !== undefined
      ? { type: 'image', source: { type: 'base64', media_type: p.mediaType, data: p.data } }
      : { type: 'image', source: { type: 'url', url: p.url } };
  });
}

export function anthropicRequest(b: ChatBody, call: ChatCall): Record<string, unknown> {
  refuseOthers(b, HANDLED, NAME);
  const rf = b.response_format as { type?: unknown } | undefined;
  if (rf && rf.type !== 'text')
    throw unsupportedField('response_format', NAME, `type "${String(rf.type)}" is not supported`);
  const system: string[] = [];
  const messages: Array<{ role: 'user' | 'assistant'; content: Block[] }> = [];
  const push = (role: 'user' | 'assistant', content: Block[]) => {
    const last = messages[messages.length - 1];
    if (last && last.role === role) last.content.push(...content);
    else messages.push({ role, content });
  };
  readMessages(b, NAME).forEach((m, i) => {
    if (m.role === 'system') return void system.push(textOf(m.parts));
    if (m.role === 'tool')
      return push('user', [{ type: 'tool_result', tool_use_id: m.toolCallId, content: textOf(m.parts) }]);
    const content = blocks(m.parts).filter((x) => x.type !== 'text' || x.text !== '');
    for (const [j, tc] of m.toolCalls.entries()) {
      content.push({
        type: 'tool_use',
        id: tc.id,
        name: tc.name,
        input: argsObject(tc.arguments, `messages[${i}].tool_calls[${j}].function.arguments`),
      });
    }
    push(m.role, content);
  });
  const out: Record<string, unknown> = {
    model: call.model.upstreamModel,
    messages,
    max_tokens: maxTokens(b) ?? ANTHROPIC_DEFAULT_MAX_TOKENS,
  };
  if (system.length > 0) out.system = system.join('\n\n');
  const temperature = optionalNumber(b, 'temperature');
  if (temperature !== undefined) out.temperature = temperature;
  const topP = optionalNumber(b, 'top_p');
  if (topP !== undefined) out.top_p = topP;
  const stop = stopList(b);
  if (stop) out.stop_sequences = stop;
  const tools = readTools(b);
  if (tools.length > 0)
    out.tools = tools.map((t) => ({
      name: t.name,
      ...(t.description ? { description: t.description } : {}),
      input_schema: t.parameters,
    }));
  const choice = readToolChoice(b);
  const noParallel = b.parallel_tool_calls === false ? { disable_parallel_tool_use: true } : {};
  if (choice === 'auto') out.tool_choice = { type: 'auto', ...noParallel };
  else if (choice === 'none') out.tool_choice = { type: 'none' };
  else if (choice === 'required') out.tool_choice = { type: 'any', ...noParallel };
  else if (choice) out.tool_choice = { type: 'tool', name: choice.name, ...noParallel };
  else if (tools.length > 0 && b.parallel_tool_calls === false)
    out.tool_choice = { type: 'auto', ...noParallel };
  if (typeof b.user === 'string') out.metadata = { user_id: b.user };
  if (call.stream) out.stream = true;
  return out;
}

const FINISH: Record<string, string> = {
  end_turn: 'stop',
  stop_sequence: 'stop',
  max_tokens: 'length',
  tool_use: 'tool_calls',
  pause_turn: 'stop',
  refusal: 'content_filter',
};

const openAiUsage = (u: Usage | undefined) =>
  u && { prompt_tokens: u.prompt, completion_tokens: u.completion, total_tokens: u.total };

export function anthropicResult(text: string, call: ChatCall): { body: string; usage: Usage | undefined } {
  const msg = JSON.parse(text) as {
    id?: string;
    model?: string;
    content?: Array<{ type: string; text?: string; id?: string; name?: string; input?: unknown }>;
    stop_reason?: string;
    usage?: unknown;
  };
  const usage = readUsage(msg.usage);
  const content = msg.content ?? [];
  const toolCalls = content
    .filter((c) => c.type === 'tool_use')
    .map((c) => ({
      id: c.id,
      type: 'function',
      function: { name: c.name, arguments: JSON.stringify(c.input ?? {}) },
    }));
  const textParts = content.filter((c) => c.type === 'text').map((c) => c.text ?? '');
  const body = {
    id: msg.id ?? call.id,
    object: 'chat.completion',
    created: call.created,
    model: msg.model ?? call.model.upstreamModel,
    choices: [
      {
        index: 0,
        message: {
          role: 'assistant',
          content: textParts.length > 0 ? textParts.join('') : null,
          ...(toolCalls.length > 0 ? { tool_calls: toolCalls } : {}),
          refusal: null,
        },
        logprobs: null,
        finish_reason: FINISH[msg.stop_reason ?? ''] ?? 'stop',
      },
    ],
    usage: openAiUsage(usage),
  };
  return { body: JSON.stringify(body), usage };
}

/** Anthropic SSE events → OpenAI chunks. */
export class AnthropicStream implements StreamTranslator {
  private input = 0;
  private output = 0;
  private seenUsage = false;
  private model: string;
  private id: string;
  /** Anthropic block index → OpenAI tool call index. */
  private readonly tools = new Map<number, number>();
  private failed: string | undefined;

  constructor(private readonly call: ChatCall) {
    this.model = call.model.upstreamModel;
    this.id = call.id;
  }

  private chunk(delta: Record<string, unknown>, finish: string | null = null): string {
    return JSON.stringify({
      id: this.id,
      object: 'chat.completion.chunk',
      created: this.call.created,
      model: this.model,
      choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }],
      ...(this.call.includeUsage ? { usage: null } : {}),
    });
  }

  event(_name: string | undefined, data: string): string[] {
    let e: Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any -- provider JSON
    try {
      e = JSON.parse(data) as Record<string, unknown>;
    } catch {
      return [];
    }
    switch (e.type) {
      case 'message_start': {
        const m = e.message ?? {};
        if (typeof m.id === 'string') this.id = m.id;
        if (typeof m.model === 'string') this.model = m.model;
        const u = readUsage(m.usage);
        if (u) {
          this.input = u.prompt;
          this.output = u.completion;
          this.seenUsage = true;
        }
        return [this.chunk({ role: 'assistant', content: '' })];
      }
      case 'content_block_start': {
        const b = e.content_block ?? {};
        if (b.type === 'tool_use') {
          const index = this.tools.size;
          this.tools.set(Number(e.index), index);
          return [
            this.chunk({
              tool_calls: [{ index, id: b.id, type: 'function', function: { name: b.name, arguments: '' } }],
            }),
          ];
        }
        return typeof b.text === 'string' && b.text !== '' ? [this.chunk({ content: b.text })] : [];
      }
      case 'content_block_delta': {
        const d = e.delta ?? {};
        if (d.type === 'text_delta') return [this.chunk({ content: d.text })];
        if (d.type === 'input_json_delta') {
          const index = this.tools.get(Number(e.index)) ?? 0;
          return [this.chunk({ tool_calls: [{ index, function: { arguments: d.partial_json } }] })];
        }
        return [];
      }
      case 'message_delta': {
        const u = e.usage ?? {};
        if (typeof u.output_tokens === 'number') this.output = u.output_tokens;
        if (typeof u.input_tokens === 'number') {
          const again = readUsage(u);
          if (again) this.input = again.prompt;
        }
        this.seenUsage = true;
        return [this.chunk({}, FINISH[e.delta?.stop_reason ?? ''] ?? 'stop')];
      }
      case 'error':
        this.failed = jsonError(data) ?? 'provider error';
        return [];
      default:
        return []; // ping, content_block_stop, message_stop
    }
  }

  end(): string[] {
    if (!this.call.includeUsage) return [];
    return [
      JSON.stringify({
        id: this.id,
        object: 'chat.completion.chunk',
        created: this.call.created,
        model: this.model,
        choices: [],
        usage: openAiUsage(this.usage()),
      }),
    ];
  }

  usage(): Usage | undefined {
    return this.seenUsage
      ? { prompt: this.input, completion: this.output, total: this.input + this.output }
      : undefined;
  }

  error(): string | undefined {
    return this.failed;
  }
}

export const anthropicAdapter: Adapter = {
  name: NAME,
  chatRequest: (b, call) => ({
    url: joinUrl(call.model.baseUrl, '/v1/messages'),
    method: 'POST',
    headers: headers(call.model),
    body: JSON.stringify(anthropicRequest(b, call)),
  }),
  chatResult: anthropicResult,
  chatStream: (call) => new AnthropicStream(call),
  passthroughRequest: (m, path, query) => ({ url: joinUrl(m.baseUrl, path, query), headers: headers(m) }),
  errorMessage: jsonError,
};
