/** The workspace every account starts with (bootstrap) and where unowned legacy data lands. */
export const DEFAULT_WORKSPACE = 'default';
