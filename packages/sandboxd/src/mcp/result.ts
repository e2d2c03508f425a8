// Tool results of the sandbox MCP server: JSON text content, `isError` with the message on failure.
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { errorMessage } from '../http/errors.js';

export async function toolResult(fn: () => Promise<unknown> | unknown): Promise<CallToolResult> {
  try {
    const value = await fn();
    const text = typeof value === 'string' ? value : JSON.stringify(value, null, 2);
    return { content: [{ type: 'text', text }] };
  } catch (err) {
    return { isError: true, content: [{ type: 'text', text: errorMessage(err) }] };
  }
}
