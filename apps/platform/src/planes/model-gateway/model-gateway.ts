/**
 * The model gateway (issue 18): `{run_url}/{ws}/models/{model}[/{path}]` on the platform's
 * listener, in front of the management app like the sandbox gateway (a raw node handler: no body
 * re-buffering by a framework, no management middleware on the hot path). Per request: a cached
 * access check (framework/access-cache.ts: a workspace member's API key or JWT), the cached model
 * (model-resolver.ts), the token budget (token-budget.ts), the upstream call with the connection's
 * key (the caller's token never leaves), and a usage record appended to memory (usage-recorder.ts).
 */
import { randomBytes } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AccessCache } from '../../framework/access-cache.js';
import type { ResolvedModel, Usage } from './adapters/adapter.js';
import { GatewayError, sendError } from './gateway-error.js';
import { modelAddress, operationOf, type ModelAddress } from './model-address.js';
import type { ModelResolver } from './model-resolver.js';
import { Exchange } from './exchange.js';
import type { TokenBudgets } from './token-budget.js';
import { Cancellation, type Upstream } from './upstream.js';
import type { UsageRecorder } from './usage-recorder.js';

export interface ModelGatewayDeps {
  access: AccessCache;
  models: ModelResolver;
  upstream: Upstream;
  budgets: TokenBudgets;
  usage: UsageRecorder;
  /** Largest request body accepted (bytes). */
  maxBodyBytes?: number;
  now?: () => number;
}

/** 32 MiB: room for a few base64 images in one chat request. */
export const DEFAULT_MAX_BODY_BYTES = 32 * 1024 * 1024;

export class ModelGateway {
  constructor(private readonly d: ModelGatewayDeps) {}

  /** The request's model address, or undefined when it is not model traffic. */
  match(req: IncomingMessage): ModelAddress | undefined {
    return modelAddress(req.url ?? '/');
  }

  async handle(req: IncomingMessage, res: ServerResponse, addr: ModelAddress): Promise<void> {
    const started = performance.now();
    const cancel = new Cancellation();
    // A response closes once: `on` spares `once`'s wrapper and removal on every request.
    res.on('close', () => {
      if (!res.writableFinished) cancel.cancel(); // client went away: cancel upstream (issue 18)
    });
    let caller = '';
    let model: ResolvedModel | undefined;
    let usage: Usage | undefined;
    let status = 500;
    try {
      // Cache hits answer without a promise (the hot path); anything else asks the caches.
      const token = bearer(req);
      caller =
        (token && this.d.access.peekAllowed(token, addr.workspace)?.id) ||
        (await this.admit(token, addr.workspace));
      model =
        this.d.models.peek(addr.workspace, addr.model)?.model ??
        (await this.d.models.get(addr.workspace, addr.model));
      if (!model)
        throw new GatewayError(
          404,
          `model "${addr.model}" not found in workspace "${addr.workspace}"`,
          null,
          'model_not_found',
        );
      if (!model.enabled)
        throw new GatewayError(
          403,
          `model "${addr.model}" is disabled (spec.enabled is false)`,
          null,
          'model_disabled',
        );
      const op = operationOf(req.method ?? 'GET', addr.path);
      if (op === 'list-models') {
        status = 200;
        return listModels(res, model);
      }
      if (model.policies.length > 0) await this.d.budgets.check(model);
      const body = await readBody(req, this.d.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES);
      const exchange = new Exchange(this.d.upstream, model, req, res, cancel);
      const out =
        op === 'chat'
          ? await exchange.chat(body, newId())
          : op === 'embeddings'
            ? await exchange.embeddings(body)
            : await exchange.passthrough(body, addr.path, addr.query);
      status = out.status;
      usage = out.usage;
    } catch (err) {
      status = err instanceof GatewayError ? err.status : 500;
      if (cancel.aborted) status = 499;
      sendError(res, err);
    } finally {
      if (model) this.account(model, caller, status, usage, started);
    }
  }

  private account(
    model: ResolvedModel,
    caller: string,
    status: number,
    usage: Usage | undefined,
    started: number,
  ): void {
    if (usage) this.d.budgets.add(model, usage);
    this.d.usage.add({
      requestId: newId(),
      at: (this.d.now ?? Date.now)(),
      accountId: model.accountId,
      workspace: model.workspace,
      model: model.name,
      modelUuid: model.uuid,
      provider: model.provider,
      caller,
      status,
      latencyMs: performance.now() - started,
      usage,
    });
  }

  /** The caller's principal id; 401 without valid credentials, 404 when not a member (no leak). */
  private async admit(token: string | undefined, workspace: string): Promise<string> {
    if (!token)
      throw new GatewayError(
        401,
        'Missing bearer token: send "Authorization: Bearer <API key or JWT>"',
        null,
        'missing_credentials',
      );
    const principal = await this.d.access.authenticated(token);
    if (!principal)
      throw new GatewayError(401, 'Invalid, expired or revoked credentials', null, 'invalid_api_key');
    if (!(await this.d.access.allowed(token, workspace)))
      throw new GatewayError(404, `workspace "${workspace}" not found`, null, 'model_not_found');
    return principal.id;
  }
}

function listModels(res: ServerResponse, m: ResolvedModel): void {
  const body = JSON.stringify({
    object: 'list',
    data: [{ id: m.name, object: 'model', created: 0, owned_by: m.provider }],
  });
  res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
  res.end(body);
}

/** The token as server-kit's `bearerToken` reads it: `Bearer <t>` or a bare token; Basic is not one. */
function bearer(req: IncomingMessage): string | undefined {
  const h =
    req.headers.authorization ??
    req.headers['x-service-authorization'] ??
    req.headers['x-blaxel-authorization'];
  const v = Array.isArray(h) ? h[0] : h;
  if (!v) return undefined;
  const m = /^Bearer\s+(\S+)\s*$/i.exec(v);
  if (m) return m[1];
  if (/^Basic\s/i.test(v)) return undefined;
  return /^\S+$/.test(v) ? v : undefined;
}

/** Unique ids without a random draw per request: a per-process random prefix and a counter. */
const ID_PREFIX = randomBytes(9).toString('base64url');
let idCounter = 0;
const newId = () => `chatcmpl-${ID_PREFIX}${(idCounter++).toString(36)}`;

export function readBody(req: IncomingMessage, limit: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size > limit) {
        reject(new GatewayError(413, `request body is larger than ${limit} bytes`));
        req.destroy();
        return;
      }
      chunks.push(c);
    });
    req.once('end', () => resolve(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks)));
    req.once('error', reject);
  });
}
