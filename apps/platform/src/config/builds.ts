import type { BuildNetworkMode } from '../planes/builds/build-network.js';
import type { PlatformEnv } from './env-schema.js';
import { optionalNumber } from './values.js';

export interface BuildConfig {
  maxUploadBytes: number;
  maxSourceBytes: number;
  urlTtlMs: number;
  memoryMB: number;
  timeoutMs: number;
  network: BuildNetworkMode;
  gcIntervalMs: number;
  layerGcGraceMs: number;
  cacheMaxAgeMs: number;
  cacheMaxBytes: number;
}

export function buildConfig(e: PlatformEnv): BuildConfig {
  const whole = (text: string | undefined, name: string, fallback: number) => {
    const v = optionalNumber(text, name, 'v', { min: 1, integer: true }).v;
    return v ?? fallback;
  };
  return {
    maxUploadBytes: whole(e.TARMAC_BUILD_UPLOAD_MAX_MB, 'TARMAC_BUILD_UPLOAD_MAX_MB', 200) * 1024 * 1024,
    maxSourceBytes: whole(e.TARMAC_BUILD_SOURCE_MAX_MB, 'TARMAC_BUILD_SOURCE_MAX_MB', 1024) * 1024 * 1024,
    urlTtlMs: whole(e.TARMAC_BUILD_URL_TTL_SECONDS, 'TARMAC_BUILD_URL_TTL_SECONDS', 900) * 1000,
    memoryMB: whole(e.TARMAC_BUILD_MEMORY_MB, 'TARMAC_BUILD_MEMORY_MB', 2048),
    timeoutMs: whole(e.TARMAC_BUILD_TIMEOUT_SECONDS, 'TARMAC_BUILD_TIMEOUT_SECONDS', 1800) * 1000,
    network: (e.TARMAC_BUILD_NETWORK ?? 'egress') as BuildNetworkMode,
    gcIntervalMs: whole(e.TARMAC_BUILD_GC_INTERVAL_SECONDS, 'TARMAC_BUILD_GC_INTERVAL_SECONDS', 3600) * 1000,
    layerGcGraceMs:
      whole(e.TARMAC_BUILD_LAYER_GC_GRACE_SECONDS, 'TARMAC_BUILD_LAYER_GC_GRACE_SECONDS', 600) * 1000,
    cacheMaxAgeMs:
      whole(e.TARMAC_BUILD_CACHE_MAX_AGE_HOURS, 'TARMAC_BUILD_CACHE_MAX_AGE_HOURS', 168) * 3_600_000,
    cacheMaxBytes: whole(e.TARMAC_BUILD_CACHE_MAX_GB, 'TARMAC_BUILD_CACHE_MAX_GB', 20) * 1024 ** 3,
  };
}
