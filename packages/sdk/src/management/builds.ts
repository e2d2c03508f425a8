import type { TarmacClient } from '../client.js';
import { apiErrorFrom } from '../http/errors.js';
import { readBody } from '../http/transport.js';

/** The kinds with a code-upload flow (issue 15). */
export type BuildKind = 'agents' | 'functions' | 'jobs' | 'applications';
export type ImageResourceType = BuildKind | 'sandboxes';

export interface OpenedUpload<T> {
  /** The signed, single-use PUT URL (`X-Service-Upload-Url`). */
  uploadUrl: string;
  resource: T;
}

/**
 * Code upload and builds (issue 15; reference §3.3): upsert a workload with `?upload=true`, PUT the
 * archive to the URL the answer carries, follow the build log and the status until BUILT/FAILED.
 */
export class BuildsApi {
  constructor(private readonly client: TarmacClient) {}

  /** Creates (POST) or replaces (PUT, when `exists`) the workload and opens its upload. */
  async openWorkload<T = { status?: string }>(
    kind: BuildKind,
    body: { metadata: { name: string } },
    exists: boolean,
  ): Promise<OpenedUpload<T>> {
    const path = exists ? `/v0/${kind}/${encodeURIComponent(body.metadata.name)}` : `/v0/${kind}`;
    return this.open<T>(exists ? 'PUT' : 'POST', path, body);
  }

  /** `POST /v0/images?upload=true`: an image-only build (tarmac push). */
  openImage(resourceType: ImageResourceType, name: string): Promise<OpenedUpload<{ status?: string }>> {
    return this.open('POST', '/v0/images', { resourceType, name });
  }

  /** PUTs the archive (zip or tar.gz) to an upload URL. */
  async upload(uploadUrl: string, archive: Uint8Array, contentType = 'application/zip'): Promise<void> {
    const res = await this.client.fetch(uploadUrl, {
      method: 'PUT',
      headers: { 'content-type': contentType },
      body: archive as unknown as RequestInit['body'],
    });
    if (!res.ok)
      throw apiErrorFrom(res.status, await readBody(res), 'PUT', uploadUrl.split('/uploads/')[0] ?? '');
  }

  /** Streams the latest build log of a record, line by line, until the build ends. */
  async followLogs(path: string, onLine: (line: string) => void, signal?: AbortSignal): Promise<void> {
    const url = `${this.client.apiUrl}${path}/logs?follow=true`;
    const res = await this.client.fetch(url, { headers: await this.client.headers(), signal });
    if (!res.ok || !res.body) throw apiErrorFrom(res.status, await readBody(res), 'GET', url);
    const decoder = new TextDecoder();
    let rest = '';
    for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
      const parts = (rest + decoder.decode(chunk, { stream: true })).split('\n');
      rest = parts.pop() ?? '';
      parts.forEach(onLine);
    }
    if (rest) onLine(rest);
  }

  private async open<T>(method: string, path: string, body: unknown): Promise<OpenedUpload<T>> {
    const url = `${this.client.apiUrl}${path}?upload=true`;
    const res = await this.client.fetch(url, {
      method,
      headers: { ...(await this.client.headers()), 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    const parsed = await readBody(res);
    if (!res.ok) throw apiErrorFrom(res.status, parsed, method, url);
    const uploadUrl = res.headers.get('x-service-upload-url') ?? res.headers.get('x-blaxel-upload-url');
    if (!uploadUrl) throw apiErrorFrom(502, { message: 'the platform sent no upload URL' }, method, url);
    return { uploadUrl, resource: parsed as T };
  }
}
