import type { Revoked } from '../../../framework/revocations.js';
import type { z } from 'zod';
import type { tokenRequestSchema, tokenResponseSchema } from '@tarmac/contract';
import { OAuthError } from '@tarmac/server-kit';
import type { PrincipalRow, Repositories } from '@tarmac/store';
import type { JwtService } from '../auth/jwt.js';
import {
  PREFIX,
  hashSecret,
  newCredential,
  parseCredential,
  secretMatches,
} from '../../../framework/credentials.js';

type TokenRequest = z.infer<typeof tokenRequestSchema>;
type TokenResponse = z.infer<typeof tokenResponseSchema>;

export interface OAuthSettings {
  accessTokenTtlSeconds: number;
  refreshTokenTtlSeconds: number;
}

/**
 * `POST /oauth/token`: client_credentials for service accounts (RFC 6749 §4.4, client id and secret
 * by HTTP Basic or in the body) and refresh_token (§6) with rotation: each refresh token works once,
 * and presenting a used one revokes every refresh token of that principal (RFC 6819 §5.2.2.3).
 */
export class OAuthService {
  constructor(
    private readonly store: Pick<Repositories, 'principals' | 'refreshTokens'>,
    private readonly jwt: JwtService,
    private readonly settings: OAuthSettings,
    private readonly now: () => Date,
    /** Told after a principal's refresh tokens are all revoked (issue 19 item 10). */
    private readonly revoked: Revoked = () => undefined,
  ) {}

  async token(
    request: TokenRequest,
    basic: { user: string; password: string } | undefined,
  ): Promise<TokenResponse> {
    const client = this.clientCredentials(request, basic);
    if (request.grant_type === 'client_credentials') {
      if (!client)
        throw new OAuthError(
          'invalid_client',
          'Client authentication required (HTTP Basic client id and secret)',
        );
      return this.issue(await this.authenticateClient(client));
    }
    if (!request.refresh_token) throw new OAuthError('invalid_request', 'refresh_token is required');
    const principal = await this.redeemRefreshToken(request.refresh_token);
    if (client && (client.id !== principal.id || !(await this.authenticateClient(client)))) {
      throw new OAuthError('invalid_grant', 'Refresh token was not issued to this client');
    }
    return this.issue(principal);
  }

  private clientCredentials(request: TokenRequest, basic: { user: string; password: string } | undefined) {
    if (basic) return { id: basic.user, secret: basic.password };
    if (request.client_id && request.client_secret)
      return { id: request.client_id, secret: request.client_secret };
    if (request.client_id || request.client_secret) {
      throw new OAuthError('invalid_request', 'client_id and client_secret must be sent together');
    }
    return undefined;
  }

  private async authenticateClient(client: { id: string; secret: string }): Promise<PrincipalRow> {
    const principal = await this.store.principals.get(client.id);
    if (
      !principal ||
      principal.kind !== 'service_account' ||
      !principal.clientSecretHash ||
      !secretMatches(client.secret, principal.clientSecretHash)
    ) {
      throw new OAuthError('invalid_client', 'Unknown client or wrong secret');
    }
    return principal;
  }

  private async redeemRefreshToken(value: string): Promise<PrincipalRow> {
    const parsed = parseCredential(value, PREFIX.refreshToken);
    const row = parsed && (await this.store.refreshTokens.get(parsed.id));
    if (!parsed || !row || !secretMatches(parsed.secret, row.secretHash)) {
      throw new OAuthError('invalid_grant', 'Unknown refresh token');
    }
    if (Date.parse(row.expiresAt) <= this.now().getTime())
      throw new OAuthError('invalid_grant', 'Refresh token expired');
    const rotated = await this.store.refreshTokens.revoke(row.id, this.now().toISOString());
    if (!rotated) {
      await this.store.refreshTokens.revokeAllForPrincipal(row.principalId, this.now().toISOString());
      this.revoked({ principalId: row.principalId });
      throw new OAuthError(
        'invalid_grant',
        'Refresh token already used; all refresh tokens of this client are revoked',
      );
    }
    const principal = await this.store.principals.get(row.principalId);
    if (!principal) throw new OAuthError('invalid_grant', 'The token’s owner no longer exists');
    return principal;
  }

  private async issue(principal: PrincipalRow): Promise<TokenResponse> {
    const access = await this.jwt.issue(principal, this.settings.accessTokenTtlSeconds);
    const refresh = newCredential(PREFIX.refreshToken);
    const at = this.now();
    await this.store.refreshTokens.create({
      id: refresh.id,
      principalId: principal.id,
      secretHash: hashSecret(refresh.secret),
      expiresAt: new Date(at.getTime() + this.settings.refreshTokenTtlSeconds * 1000).toISOString(),
      createdAt: at.toISOString(),
      revokedAt: null,
      replacedBy: null,
    });
    return {
      access_token: access.token,
      token_type: 'Bearer',
      expires_in: access.expiresIn,
      refresh_token: refresh.value,
    };
  }
}
