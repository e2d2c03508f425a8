// The egress proxy (ARCHITECTURE.md beside this file): an HTTP forward proxy that sandboxes reach
// through HTTP_PROXY/HTTPS_PROXY. It answers plain-HTTP absolute-URI requests and CONNECT, finds
// the caller's policy by its proxy credentials (proxy-auth.ts; 407 without), and per destination
// refuses (403), tunnels, or intercepts TLS to inject a routing rule's headers, body and secrets.
import {
  createServer,
  Agent as HttpAgent,
  type IncomingMessage,
  type Server,
  type ServerResponse,
} from 'node:http';
import { Agent as HttpsAgent } from 'node:https';
import { connect, isIP, type Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { createSecureContext, rootCertificates, TLSSocket } from 'node:tls';
import type { LeafCertificates } from './certificate-authority.js';
import {
  DestinationGuard,
  guardedLookup,
  type Lookup,
} from '../../../framework/destinations/destination-guard.js';
import { forward, type Upstream } from './forward.js';
import { decide, type Decision, type EgressPolicy } from './policy.js';
import {
  PROXY_AUTH_REQUIRED,
  PROXY_AUTHENTICATE,
  proxyCredentials,
  type ProxyCredentials,
} from './proxy-auth.js';
import { refuseResponse, refuseSocket } from './refusal.js';
import { describeUpstreamError } from './upstream-errors.js';

/**
 * The policy of the sandbox these credentials prove, connecting from `clientIp`; undefined when
 * they prove none (answered 407: no policy, no secrets).
 */
export type PolicyLookup = (
  clientIp: string,
  credentials: ProxyCredentials | undefined,
) => EgressPolicy | undefined | Promise<EgressPolicy | undefined>;

export interface EgressProxyOptions {
  /** The policy of the sandbox the request's credentials prove; undefined = refused (407). */
  policyFor: PolicyLookup;
  leafCertificates: LeafCertificates;
  /** Extra PEM CAs trusted for upstream TLS, on top of the system's (tests: the fake outside's CA). */
  extraUpstreamCa?: readonly string[];
  /** CIDRs never reachable through the proxy, on top of loopback/link-local (the sandbox bridge). */
  blockedCidrs?: readonly string[];
  /** The full guard (host addresses, allow-list); built from `blockedCidrs` alone when absent. */
  guard?: DestinationGuard;
  /** Name resolution; dns.lookup by default. Tests pass a fixed table. */
  lookup?: Lookup;
  connectTimeoutMs?: number;
  log?: (event: EgressEvent) => void;
}

export interface EgressEvent {
  sandbox: string | undefined;
  clientIp: string;
  host: string;
  port: number;
  via: 'http' | 'connect' | 'intercept';
  decision: Decision['kind'] | 'unknown-client' | 'blocked';
}

interface InterceptedTarget {
  host: string;
  port: number;
  clientIp: string;
  /** The CONNECT's credentials: requests inside the intercepted TLS carry none of their own. */
  credentials: ProxyCredentials | undefined;
}

const TLS_HANDSHAKE = 0x16;

export function clientAddress(socket: { remoteAddress?: string | undefined }): string {
  const a = socket.remoteAddress ?? '';
  return a.startsWith('::ffff:') && isIP(a.slice(7)) === 4 ? a.slice(7) : a;
}

/** `host:port` of a CONNECT request target (RFC 9110 §9.3.6), IPv6 in brackets. */
export function parseAuthority(target: string): { host: string; port: number } | undefined {
  const m = /^(?:\[([0-9a-fA-F:.]+)\]|([^\s:/@[\]]+)):(\d{1,5})$/.exec(target);
  if (!m) return undefined;
  const port = Number(m[3]);
  if (port < 1 || port > 65_535) return undefined;
  return { host: (m[1] ?? m[2] ?? '').toLowerCase(), port };
}

export class EgressProxy {
  readonly server: Server;
  private readonly intercepting: Server;
  private readonly targets = new WeakMap<object, InterceptedTarget>();
  private readonly guard: DestinationGuard;
  private readonly lookup: Lookup;
  private readonly upstream: Upstream;
  private readonly sockets = new Set<Duplex>();

  constructor(private readonly options: EgressProxyOptions) {
    const guard =
      options.guard ??
      new DestinationGuard(options.blockedCidrs ? { blockedCidrs: options.blockedCidrs } : {});
    this.guard = guard;
    this.lookup = guardedLookup((address) => guard.blocks(address), options.lookup);
    const agentOptions = {
      keepAlive: true,
      lookup: this.lookup,
      timeout: options.connectTimeoutMs ?? 30_000,
    };
    this.upstream = {
      http: new HttpAgent(agentOptions),
      // A prebuilt context rather than `ca`: the agent keys its socket pool by the text of `ca`,
      // which would concatenate ~150 root certificates on every request.
      https: new HttpsAgent({
        ...agentOptions,
        secureContext: createSecureContext({ ca: [...rootCertificates, ...(options.extraUpstreamCa ?? [])] }),
      }),
      describeError: (err) => describeUpstreamError(err),
    };
    this.server = createServer((req, res) => void this.onRequest(req, res).catch((e) => this.fail(res, e)));
    this.server.on('connect', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
      this.track(socket);
      void this.onConnect(req, socket, head).catch((e: unknown) =>
        refuseSocket(socket, 502, describeUpstreamError(e).message),
      );
    });
    this.server.on('connection', (s: Socket) => this.track(s));
    this.intercepting = createServer(
      (req, res) => void this.onIntercepted(req, res).catch((e) => this.fail(res, e)),
    );
  }

  /** Closes the listener and every connection it carries (tunnels included). */
  async close(): Promise<void> {
    const closed = new Promise<void>((resolve) => this.server.close(() => resolve()));
    for (const s of this.sockets) s.destroy();
    this.upstream.http.destroy();
    this.upstream.https.destroy();
    await closed;
  }

  private track(s: Duplex): void {
    this.sockets.add(s);
    s.on('close', () => this.sockets.delete(s));
    s.on('error', () => undefined);
  }

  private fail(res: ServerResponse, err: unknown): void {
    const { status, message } = describeUpstreamError(err);
    refuseResponse(res, status, message);
  }

  private async decideFor(
    clientIp: string,
    credentials: ProxyCredentials | undefined,
    host: string,
    port: number,
    via: EgressEvent['via'],
  ): Promise<{ decision: Decision } | { status: number; error: string }> {
    const policy = await this.options.policyFor(clientIp, credentials);
    const base = { sandbox: policy?.sandbox, clientIp, host, port, via };
    if (!policy) {
      this.options.log?.({ ...base, decision: 'unknown-client' });
      return { status: 407, error: PROXY_AUTH_REQUIRED };
    }
    if (this.guard.blocks(host)) {
      this.options.log?.({ ...base, decision: 'blocked' });
      return {
        status: 403,
        error: `${host} is a platform-internal address the egress proxy never connects to`,
      };
    }
    const decision = decide(policy, host);
    this.options.log?.({ ...base, decision: decision.kind });
    if (decision.kind === 'deny') return { status: 403, error: decision.reason };
    return { decision };
  }

  /** A plain-HTTP proxy request: `GET http://host/path HTTP/1.1`. */
  private async onRequest(req: IncomingMessage, res: ServerResponse): Promise<void> {
    let url: URL;
    try {
      url = new URL(req.url ?? '');
    } catch {
      return refuseResponse(
        res,
        400,
        'this is an egress proxy: send absolute-URI requests (http://host/path) or CONNECT',
      );
    }
    if (url.protocol !== 'http:') {
      return refuseResponse(
        res,
        400,
        `absolute-URI requests must be http:, got ${url.protocol} (use CONNECT for TLS)`,
      );
    }
    const host = url.hostname.replace(/^\[|\]$/g, '').toLowerCase();
    const port = Number(url.port || 80);
    const verdict = await this.decideFor(
      clientAddress(req.socket),
      proxyCredentials(req.headers),
      host,
      port,
      'http',
    );
    if ('error' in verdict)
      return refuseResponse(res, verdict.status, verdict.error, challenge(verdict.status));
    const rule = verdict.decision.kind === 'route' ? verdict.decision.rule : undefined;
    await forward(
      req,
      res,
      { protocol: 'http:', host, port, path: `${url.pathname}${url.search}`, rule },
      this.upstream,
    );
  }

  private async onConnect(req: IncomingMessage, socket: Duplex, head: Buffer): Promise<void> {
    const target = parseAuthority(req.url ?? '');
    if (!target) return refuseSocket(socket, 400, `CONNECT target must be host:port, got "${req.url ?? ''}"`);
    const clientIp = clientAddress(req.socket);
    const credentials = proxyCredentials(req.headers);
    const verdict = await this.decideFor(clientIp, credentials, target.host, target.port, 'connect');
    if ('error' in verdict)
      return refuseSocket(socket, verdict.status, verdict.error, challenge(verdict.status));
    if (verdict.decision.kind === 'pass') return this.tunnel(socket, head, target);
    // A routing rule: look at the first bytes. TLS is intercepted; anything else is tunnelled
    // untouched (no injection is possible into an unknown protocol).
    socket.write('HTTP/1.1 200 Connection Established\r\n\r\n');
    const first = head.length > 0 ? head : await firstChunk(socket);
    if (!first) return;
    socket.pause();
    socket.unshift(first);
    if (first[0] !== TLS_HANDSHAKE) return this.pipeTo(socket, target);
    const tlsSocket = new TLSSocket(socket as Socket, {
      isServer: true,
      secureContext: this.options.leafCertificates.contextFor(target.host),
      ALPNProtocols: ['http/1.1'],
    });
    tlsSocket.on('error', () => socket.destroy());
    this.targets.set(tlsSocket, { ...target, clientIp, credentials });
    this.intercepting.emit('connection', tlsSocket);
  }

  /** A request inside an intercepted TLS connection; the policy is read again for each one. */
  private async onIntercepted(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const target = this.targets.get(req.socket);
    if (!target) return refuseResponse(res, 500, 'intercepted connection lost its destination');
    const verdict = await this.decideFor(
      target.clientIp,
      target.credentials,
      target.host,
      target.port,
      'intercept',
    );
    if ('error' in verdict) return refuseResponse(res, verdict.status, verdict.error);
    const rule = verdict.decision.kind === 'route' ? verdict.decision.rule : undefined;
    await forward(
      req,
      res,
      { protocol: 'https:', host: target.host, port: target.port, path: req.url ?? '/', rule },
      this.upstream,
    );
  }

  /** Plain CONNECT: answer 200 only once the destination accepted, then copy bytes both ways. */
  private tunnel(socket: Duplex, head: Buffer, target: { host: string; port: number }): void {
    const upstream = connect({
      host: target.host,
      port: target.port,
      lookup: this.lookup,
      timeout: this.options.connectTimeoutMs ?? 30_000,
    });
    this.track(upstream);
    const onFail = (err: Error) =>
      refuseSocket(socket, describeUpstreamError(err).status, describeUpstreamError(err).message);
    upstream.once('error', onFail);
    upstream.once('timeout', () => {
      upstream.destroy();
      refuseSocket(socket, 504, `connecting to ${target.host}:${target.port} timed out`);
    });
    upstream.once('connect', () => {
      upstream.removeListener('error', onFail);
      upstream.setTimeout(0);
      socket.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      if (head.length > 0) upstream.write(head);
      splice(socket, upstream);
    });
  }

  /** After a 200 was already sent: connect and splice, or drop the client on failure. */
  private pipeTo(socket: Duplex, target: { host: string; port: number }): void {
    const upstream = connect({ host: target.host, port: target.port, lookup: this.lookup });
    this.track(upstream);
    upstream.once('error', () => socket.destroy());
    upstream.once('connect', () => splice(socket, upstream));
  }
}

/** A 407 names the scheme to authenticate with; other refusals add nothing. */
const challenge = (status: number): Record<string, string> => (status === 407 ? PROXY_AUTHENTICATE : {});

function splice(a: Duplex, b: Duplex): void {
  a.pipe(b);
  b.pipe(a);
  a.on('close', () => b.destroy());
  b.on('close', () => a.destroy());
  a.resume();
}

function firstChunk(socket: Duplex): Promise<Buffer | undefined> {
  return new Promise((resolve) => {
    const onData = (c: Buffer) => {
      cleanup();
      resolve(c);
    };
    const onEnd = () => {
      cleanup();
      resolve(undefined);
    };
    const cleanup = () => {
      socket.removeListener('data', onData);
      socket.removeListener('end', onEnd);
      socket.removeListener('close', onEnd);
    };
    socket.on('data', onData);
    socket.once('end', onEnd);
    socket.once('close', onEnd);
  });
}
