/** A ready member of the warm pool (warm-pool.ts): booted for a fresh record id, nobody's yet. */
export interface PoolMember {
  readonly recordId: string;
  readonly engineId: string;
  readonly ip: string;
  /** Epoch ms its container was created (the live map's bootedMs once claimed). */
  readonly bootedMs: number;
  readonly shape: string;
  readonly engineImage: string;
  readonly memoryMB: number;
  readonly imageSizeBytes: number | undefined;
}
