import WebSocket from 'ws';
import type { WebSocketFactory, WebSocketLike } from '../sandbox/websocket.js';
import { isLocalhostName, loopbackLookup } from './localhost.js';

/** Websockets on `ws`: real headers (auth, workspace) and `*.localhost` resolution. */
export const nodeWebSocketFactory: WebSocketFactory = (url, headers) => {
  const { hostname } = new URL(url);
  return new WebSocket(url, {
    headers,
    ...(isLocalhostName(hostname) ? { lookup: loopbackLookup } : {}),
  }) as unknown as WebSocketLike;
};
