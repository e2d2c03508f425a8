import { coreRoutes as r, type RouteResponse } from '@tarmac/contract';
import type { TarmacClient } from '../client.js';

type TokenResponse = RouteResponse<typeof r.issueToken>;

/** Operations and OAuth routes: health, readiness, JWKS, token exchange. */
export class PlatformApi {
  constructor(private readonly client: TarmacClient) {}
  health() {
    return this.client.request(r.health);
  }
  ready() {
    return this.client.request(r.ready);
  }
  jwks() {
    return this.client.request(r.jwks);
  }
  /** Exchanges service-account credentials for a short-lived JWT (HTTP Basic, RFC 6749 §4.4). */
  clientCredentialsToken(clientId: string, clientSecret: string): Promise<TokenResponse> {
    return this.client.transport.json<TokenResponse>({
      method: 'POST',
      url: `${this.client.apiUrl}${r.issueToken.path}`,
      headers: { authorization: `Basic ${btoa(`${clientId}:${clientSecret}`)}` },
      json: { grant_type: 'client_credentials' },
    });
  }
  refreshToken(refreshToken: string): Promise<TokenResponse> {
    return this.client.request(r.issueToken, {
      body: { grant_type: 'refresh_token', refresh_token: refreshToken },
    });
  }
}
