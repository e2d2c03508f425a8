import { encodeFsPath, type SandboxHttp } from './data-plane.js';

/** Above this size uploads use the multipart protocol, in parts of this size (reference §1.2). */
export const MULTIPART_THRESHOLD = 5 * 1024 * 1024;
export const MULTIPART_PART_SIZE = 5 * 1024 * 1024;
/** Parallel part uploads; upstream caps at 2 per edge domain. */
const CONCURRENCY = 2;

export interface MultipartOptions {
  partSize?: number;
  permissions?: string;
  signal?: AbortSignal | undefined;
}

/** Initiate, upload parts (at most 2 at once), complete; abort on any failure so nothing lingers. */
export async function multipartUpload(
  http: SandboxHttp,
  path: string,
  data: Uint8Array,
  options: MultipartOptions = {},
): Promise<void> {
  const partSize = options.partSize ?? MULTIPART_PART_SIZE;
  const { uploadId } = await http.json<{ uploadId: string }>({
    method: 'POST',
    path: `/filesystem-multipart/initiate${encodeFsPath(path)}`,
    json: options.permissions ? { permissions: options.permissions } : {},
    signal: options.signal,
  });
  const count = Math.max(1, Math.ceil(data.byteLength / partSize));
  const parts: { partNumber: number; etag: string }[] = [];
  try {
    let next = 1;
    const worker = async () => {
      while (next <= count) {
        const partNumber = next++;
        const chunk = data.subarray((partNumber - 1) * partSize, partNumber * partSize);
        const form = new FormData();
        form.append('file', new Blob([chunk as Uint8Array<ArrayBuffer>]), 'part');
        const part = await http.json<{ partNumber: number; etag: string }>({
          method: 'PUT',
          path: `/filesystem-multipart/${encodeURIComponent(uploadId)}/part`,
          query: { partNumber },
          body: form,
          signal: options.signal,
        });
        parts.push({ partNumber, etag: part.etag });
      }
    };
    await Promise.all(Array.from({ length: Math.min(CONCURRENCY, count) }, worker));
    parts.sort((a, b) => a.partNumber - b.partNumber);
    await http.send({
      method: 'POST',
      path: `/filesystem-multipart/${encodeURIComponent(uploadId)}/complete`,
      json: { parts },
      signal: options.signal,
    });
  } catch (error) {
    await http
      .send({ method: 'DELETE', path: `/filesystem-multipart/${encodeURIComponent(uploadId)}/abort` })
      .catch(() => undefined);
    throw error;
  }
}
