// No zod here: the SDK's token exchange imports only this path (see error-status.ts for why).

/** The OAuth token endpoint (`coreRoutes.issueToken`), under the API base. */
export const ISSUE_TOKEN_PATH = '/oauth/token';
