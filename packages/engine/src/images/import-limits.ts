// Bounds on what one image import may consume (issue 19 item 1: "cap sizes"). Engine options
// (LocalEngineOptions.importLimits); the defaults fit real images (Debian base: 15k files, 350 MB;
// large CUDA images: ~200k files, ~15 GB) with room, and stop a hostile archive long before it
// fills the disk or the inode table.
export interface ImportLimits {
  /** Size of the uploaded archive file. */
  maxArchiveBytes: number;
  /** Bytes of file content, summed over the outer archive and, separately, over all layers. */
  maxUnpackedBytes: number;
  /** Members (files, dirs, links...), counted the same way. */
  maxEntries: number;
}

const GiB = 1024 ** 3;

export const DEFAULT_IMPORT_LIMITS: ImportLimits = {
  maxArchiveBytes: 16 * GiB,
  maxUnpackedBytes: 32 * GiB,
  maxEntries: 1_000_000,
};
