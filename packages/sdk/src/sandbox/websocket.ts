/**
 * The slice of the WebSocket API the terminal needs. Browsers and Node 22+ provide it globally;
 * `@tarmac/sdk/node` supplies one built on `ws` (with headers and `*.localhost` resolution).
 */
export interface WebSocketLike {
  readonly readyState: number;
  send(data: string): void;
  close(code?: number, reason?: string): void;
  addEventListener(type: 'open', listener: () => void): void;
  addEventListener(type: 'message', listener: (event: { data: unknown }) => void): void;
  addEventListener(type: 'close', listener: (event: { code: number; reason: string }) => void): void;
  addEventListener(type: 'error', listener: (event: unknown) => void): void;
}

/** Opens a socket. `headers` is best effort: browsers cannot set them, so the token also rides in the URL. */
export type WebSocketFactory = (url: string, headers: Record<string, string>) => WebSocketLike;

export function defaultWebSocketFactory(): WebSocketFactory | undefined {
  const Ctor = (globalThis as { WebSocket?: new (url: string) => WebSocketLike }).WebSocket;
  return Ctor ? (url) => new Ctor(url) : undefined;
}
