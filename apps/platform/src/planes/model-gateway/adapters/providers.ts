/**
 * Which adapter serves each `spec.runtime.type` (reference §2.2 enum), the provider's documented
 * base URL (written the way its official SDK takes it: OpenAI-style ending in `/v1`, Anthropic and
 * Gemini the host root), and which connection secret holds the key. A connection's
 * `config.baseUrl` overrides the default: that is the OpenAI-compatible adapter for self-hosted
 * servers (vLLM, Ollama, llama.cpp, LM Studio), e.g. type `openai` + `http://10.0.0.5:8000/v1`.
 */
import type { Adapter } from './adapter.js';
import { anthropicAdapter } from './anthropic.js';
import { geminiAdapter } from './gemini.js';
import { azureOpenAiAdapter, openAiAdapter } from './openai.js';

export interface Provider {
  adapter: Adapter;
  /** Undefined: the connection must give `config.baseUrl`. */
  baseUrl: string | undefined;
  /** Secret keys tried in order; then `API_KEY`; then the connection's only secret. */
  keys: readonly string[];
}

const openAiCompatible = (baseUrl: string | undefined, ...keys: string[]): Provider => ({
  adapter: openAiAdapter,
  baseUrl,
  keys,
});

export const PROVIDERS: Readonly<Record<string, Provider>> = {
  openai: openAiCompatible('https://api.openai.com/v1', 'OPENAI_API_KEY'),
  mistral: openAiCompatible('https://api.mistral.ai/v1', 'MISTRAL_API_KEY'),
  groq: openAiCompatible('https://api.groq.com/openai/v1', 'GROQ_API_KEY'),
  deepseek: openAiCompatible('https://api.deepseek.com/v1', 'DEEPSEEK_API_KEY'),
  xai: openAiCompatible('https://api.x.ai/v1', 'XAI_API_KEY'),
  cerebras: openAiCompatible('https://api.cerebras.ai/v1', 'CEREBRAS_API_KEY'),
  cohere: openAiCompatible('https://api.cohere.ai/compatibility/v1', 'COHERE_API_KEY', 'CO_API_KEY'),
  // Self-hosted and hosted OpenAI-compatible servers: the base URL is the connection's.
  public_model: openAiCompatible(undefined),
  huggingface: openAiCompatible(undefined, 'HF_TOKEN', 'HF_API_KEY'),
  hf_public_endpoint: openAiCompatible(undefined, 'HF_TOKEN', 'HF_API_KEY'),
  hf_private_endpoint: openAiCompatible(undefined, 'HF_TOKEN', 'HF_API_KEY'),
  'azure-ai-inference': openAiCompatible(undefined, 'AZURE_API_KEY'),
  'azure-marketplace': openAiCompatible(undefined, 'AZURE_API_KEY'),
  anthropic: { adapter: anthropicAdapter, baseUrl: 'https://api.anthropic.com', keys: ['ANTHROPIC_API_KEY'] },
  gemini: {
    adapter: geminiAdapter,
    baseUrl: 'https://generativelanguage.googleapis.com',
    keys: ['GEMINI_API_KEY', 'GOOGLE_API_KEY'],
  },
  'azure-openai-service': {
    adapter: azureOpenAiAdapter,
    baseUrl: undefined,
    keys: ['AZURE_OPENAI_API_KEY', 'AZURE_API_KEY'],
  },
};

/** The key a connection's secrets hold for this provider, per `Provider.keys`. */
export function pickKey(provider: Provider, secret: Readonly<Record<string, string>>): string | undefined {
  for (const k of [...provider.keys, 'API_KEY']) if (secret[k]) return secret[k];
  const values = Object.values(secret);
  return values.length === 1 ? values[0] : undefined;
}
