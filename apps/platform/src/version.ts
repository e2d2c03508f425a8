/** Platform release, reported by `tarmac version`, the OpenAPI document and /health logs. */
export const PLATFORM_VERSION = '0.1.0';
