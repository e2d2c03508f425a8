import type {
  ContentSearchResponse,
  FindResponse,
  FuzzySearchResponse,
  SandboxDirectory,
  SandboxFileWithContent,
  SandboxSuccess,
  WatchEvent,
} from '@tarmac/contract';
import { encodeFsPath, readLines, type SandboxHttp } from './data-plane.js';
import { MULTIPART_THRESHOLD, multipartUpload, type MultipartOptions } from './multipart.js';

const csv = (list: readonly string[] | undefined) => (list ? list.join(',') : undefined);
const bytesOf = (data: string | Uint8Array) =>
  typeof data === 'string' ? new TextEncoder().encode(data) : data;

export interface FindOptions {
  type?: 'file' | 'directory';
  patterns?: string[];
  maxResults?: number;
  excludeDirs?: string[];
  excludeHidden?: boolean;
}
export interface GrepOptions {
  caseSensitive?: boolean;
  maxResults?: number;
  filePattern?: string;
  excludeDirs?: string[];
}
export interface WatchHandle {
  close(): void;
  /** Resolves once the sandbox has accepted the watch: changes after this are seen. */
  ready: Promise<void>;
  /** Resolves when the stream ends (closed by you or by the sandbox). */
  done: Promise<void>;
}

/**
 * `sandbox.fs`: the sandbox filesystem API (reference §1.2). Absolute paths are absolute in the
 * sandbox; relative ones resolve against the daemon's working directory.
 */
export class SandboxFilesystem {
  /** Uploads larger than this use the multipart protocol. */
  multipartThreshold = MULTIPART_THRESHOLD;

  constructor(private readonly http: SandboxHttp) {}

  async read(path: string): Promise<string> {
    const file = await this.http.json<SandboxFileWithContent>({
      method: 'GET',
      path: `/filesystem${encodeFsPath(path)}`,
      headers: { accept: 'application/json' },
    });
    return file.content;
  }

  async readBinary(path: string): Promise<Uint8Array> {
    const response = await this.http.send({
      method: 'GET',
      path: `/filesystem${encodeFsPath(path)}`,
      headers: { accept: 'application/octet-stream' },
    });
    return new Uint8Array(await response.arrayBuffer());
  }

  /** Same as readBinary; the name the CLI's `sandbox cp` uses. */
  download(path: string): Promise<Uint8Array> {
    return this.readBinary(path);
  }

  async write(
    path: string,
    content: string,
    options: { permissions?: string } = {},
  ): Promise<SandboxSuccess> {
    if (new TextEncoder().encode(content).byteLength > this.multipartThreshold) {
      return this.upload(path, content, options);
    }
    return this.http.json<SandboxSuccess>({
      method: 'PUT',
      path: `/filesystem${encodeFsPath(path)}`,
      json: { content, ...(options.permissions ? { permissions: options.permissions } : {}) },
    });
  }

  /** Writes bytes as a multipart form (or the multipart protocol above the threshold). */
  async writeBinary(
    path: string,
    data: Uint8Array | string,
    options: { permissions?: string } = {},
  ): Promise<SandboxSuccess> {
    return this.upload(path, data, options);
  }

  async upload(
    path: string,
    data: Uint8Array | string,
    options: MultipartOptions = {},
  ): Promise<SandboxSuccess> {
    const bytes = bytesOf(data);
    if (bytes.byteLength > this.multipartThreshold) {
      await multipartUpload(this.http, path, bytes, options);
      return { message: 'File uploaded successfully', path };
    }
    const form = new FormData();
    form.append('file', new Blob([bytes as Uint8Array<ArrayBuffer>]), path.split('/').pop() || 'file');
    form.append('permissions', options.permissions ?? '0644');
    return this.http.json<SandboxSuccess>({
      method: 'PUT',
      path: `/filesystem${encodeFsPath(path)}`,
      body: form,
    });
  }

  mkdir(path: string, permissions = '0755'): Promise<SandboxSuccess> {
    return this.http.json({
      method: 'PUT',
      path: `/filesystem${encodeFsPath(path)}`,
      json: { isDirectory: true, permissions },
    });
  }

  ls(path: string): Promise<SandboxDirectory> {
    return this.http.json({
      method: 'GET',
      path: `/filesystem${encodeFsPath(path)}`,
      headers: { accept: 'application/json' },
    });
  }

  rm(path: string, options: { recursive?: boolean } = {}): Promise<SandboxSuccess> {
    return this.http.json({
      method: 'DELETE',
      path: `/filesystem${encodeFsPath(path)}`,
      query: options.recursive ? { recursive: true } : {},
    });
  }

  tree(path: string): Promise<SandboxDirectory> {
    return this.http.json({ method: 'GET', path: `/filesystem/tree${encodeFsPath(path)}` });
  }

  /** Writes many files under `dest` in one call: `{"rel/path": "content"}`. */
  writeTree(dest: string, files: Record<string, string>): Promise<SandboxDirectory> {
    return this.http.json({ method: 'PUT', path: `/filesystem/tree${encodeFsPath(dest)}`, json: { files } });
  }

  find(path: string, options: FindOptions = {}): Promise<FindResponse> {
    return this.http.json({
      method: 'GET',
      path: `/filesystem-find${encodeFsPath(path)}`,
      query: {
        type: options.type,
        patterns: csv(options.patterns),
        maxResults: options.maxResults,
        excludeDirs: csv(options.excludeDirs),
        excludeHidden: options.excludeHidden,
      },
    });
  }

  /** Fuzzy file-name search under `path`. */
  search(path: string, options: Omit<FindOptions, 'type'> = {}): Promise<FuzzySearchResponse> {
    return this.http.json({
      method: 'GET',
      path: `/filesystem-search${encodeFsPath(path)}`,
      query: {
        patterns: csv(options.patterns),
        maxResults: options.maxResults,
        excludeDirs: csv(options.excludeDirs),
      },
    });
  }

  /** Substring search in file contents under `path` (1-based line and column). */
  grep(query: string, path = '/', options: GrepOptions = {}): Promise<ContentSearchResponse> {
    return this.http.json({
      method: 'GET',
      path: `/filesystem-content-search${encodeFsPath(path)}`,
      query: {
        query,
        caseSensitive: options.caseSensitive,
        maxResults: options.maxResults,
        filePattern: options.filePattern,
        excludeDirs: csv(options.excludeDirs),
      },
    });
  }

  /**
   * Calls `onEvent` for each change under `path` (recursive with `recursive: true`) until
   * `close()`. Keep-alive lines are skipped.
   */
  watch(
    path: string,
    onEvent: (event: WatchEvent) => void,
    options: { recursive?: boolean; ignore?: string[]; onError?: (error: unknown) => void } = {},
  ): WatchHandle {
    const abort = new AbortController();
    let markReady: () => void = () => undefined;
    const ready = new Promise<void>((resolve) => (markReady = resolve));
    const target = options.recursive ? `${path.replace(/\/+$/, '')}/**` : path;
    const done = (async () => {
      const response = await this.http.send({
        method: 'GET',
        path: `/watch/filesystem${encodeFsPath(target)}`,
        query: { ignore: csv(options.ignore) },
        signal: abort.signal,
      });
      markReady();
      await readLines(response.body, (line) => {
        if (!line.trim() || line.includes('[keepalive]')) return;
        onEvent(JSON.parse(line) as WatchEvent);
      });
    })()
      .catch((error: unknown) => {
        if (!abort.signal.aborted) options.onError?.(error);
      })
      .finally(markReady);
    return { close: () => abort.abort(), ready, done };
  }
}
