/**
 * Request headers a proxying plane never passes on (the sandbox gateway, the run gateway, async
 * requests): hop-by-hop ones (RFC 9110 §7.6.1) and the caller's credentials for the platform.
 */
export const HOP_BY_HOP = [
  'connection',
  'keep-alive',
  'proxy-connection',
  'transfer-encoding',
  'te',
  'upgrade',
  'trailer',
] as const;

/** The platform's own credential headers (spec "Authentication"): never the workload's to see. */
export const PLATFORM_CREDENTIALS = ['x-service-authorization', 'x-blaxel-authorization'] as const;
