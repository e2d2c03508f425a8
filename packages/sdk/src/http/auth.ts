import { ISSUE_TOKEN_PATH, type coreRoutes, type RouteResponse } from '@tarmac/contract';
import type { FetchLike } from './transport.js';
import { HttpTransport } from './transport.js';

type TokenResponse = RouteResponse<typeof coreRoutes.issueToken>;

/** Supplies the bearer token: a fixed API key, or a client-credentials JWT refreshed at half-life. */
export interface TokenSource {
  token(): Promise<string | undefined>;
}

export class StaticToken implements TokenSource {
  constructor(private readonly value: string | undefined) {}
  async token() {
    return this.value;
  }
}

export class ClientCredentialsToken implements TokenSource {
  private current: { value: string; refreshAt: number } | undefined;
  private pending: Promise<string> | undefined;
  private readonly transport: HttpTransport;

  constructor(
    private readonly apiUrl: string,
    private readonly clientId: string,
    private readonly clientSecret: string,
    fetch: FetchLike,
    private readonly now: () => number = Date.now,
  ) {
    this.transport = new HttpTransport({ fetch, headers: async () => ({}) });
  }

  async token(): Promise<string> {
    if (this.current && this.now() < this.current.refreshAt) return this.current.value;
    // One exchange at a time, however many requests wait for it.
    this.pending ??= this.exchange().finally(() => (this.pending = undefined));
    return this.pending;
  }

  private async exchange(): Promise<string> {
    const basic = btoa(`${this.clientId}:${this.clientSecret}`);
    const answer = await this.transport.json<TokenResponse>({
      method: 'POST',
      url: `${this.apiUrl}${ISSUE_TOKEN_PATH}`,
      headers: { authorization: `Basic ${basic}` },
      json: { grant_type: 'client_credentials' },
    });
    this.current = { value: answer.access_token, refreshAt: this.now() + (answer.expires_in * 1000) / 2 };
    return answer.access_token;
  }
}
