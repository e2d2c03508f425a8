// Terminal WebSocket messages (reference sandbox-api.md §1.6). The client sends `input` and
// `resize`; the server sends `output` and `error`.
import * as z from 'zod/mini';

const dimension = z.int().check(z.minimum(1), z.maximum(1000));

export const terminalClientMessageSchema = z.discriminatedUnion('type', [
  z.object({ type: z.literal('input'), data: z.string() }),
  z.object({ type: z.literal('resize'), cols: dimension, rows: dimension }),
]);
export type TerminalClientMessage = z.infer<typeof terminalClientMessageSchema>;

export const terminalServerMessageSchema = z.object({
  type: z.enum(['output', 'error']),
  data: z.string(),
});
export type TerminalServerMessage = z.infer<typeof terminalServerMessageSchema>;
