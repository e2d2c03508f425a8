import type { ProcessLogs, ProcessRequest, ProcessResponse, ProcessStreamEvent } from '@tarmac/contract';
import { TarmacTimeoutError } from '../http/errors.js';
import { sleep } from '../http/retry.js';
import { readLines, type SandboxHttp } from './data-plane.js';

export interface OutputCallbacks {
  onStdout?: (chunk: string) => void;
  onStderr?: (chunk: string) => void;
  /** Both streams, in arrival order. */
  onLog?: (chunk: string, stream: 'stdout' | 'stderr') => void;
}
export type ExecOptions = ProcessRequest & OutputCallbacks & { signal?: AbortSignal };
export interface LogStream {
  close(): void;
  /** Resolves when the process has exited and its output drained (or on close). */
  done: Promise<void>;
}

const id = (identifier: string) => encodeURIComponent(identifier);

function emit(callbacks: OutputCallbacks, stream: 'stdout' | 'stderr', chunk: string) {
  if (stream === 'stdout') callbacks.onStdout?.(chunk);
  else callbacks.onStderr?.(chunk);
  callbacks.onLog?.(chunk, stream);
}

/** `sandbox.process`: run commands, read and follow their output, stop them (reference §1.3). */
export class SandboxProcesses {
  constructor(private readonly http: SandboxHttp) {}

  /**
   * Starts a command. With `waitForCompletion` and an output callback, output arrives live over
   * the NDJSON stream and the final state is returned; with callbacks only, the log stream is
   * followed in the background.
   */
  async exec(options: ExecOptions): Promise<ProcessResponse> {
    const { onStdout, onStderr, onLog, signal, ...request } = options;
    const callbacks = { onStdout, onStderr, onLog };
    const live = Boolean(onStdout || onStderr || onLog);
    if (live && request.waitForCompletion) return this.execStreaming(request, callbacks, signal);
    const started = await this.http.json<ProcessResponse>({
      method: 'POST',
      path: '/process',
      json: request,
      signal,
    });
    if (live) this.streamLogs(started.name, callbacks);
    return started;
  }

  private async execStreaming(
    request: ProcessRequest,
    callbacks: OutputCallbacks,
    signal: AbortSignal | undefined,
  ): Promise<ProcessResponse> {
    const response = await this.http.send({
      method: 'POST',
      path: '/process',
      json: request,
      headers: { accept: 'text/event-stream' },
      signal,
    });
    // A daemon without streaming answers plain JSON: replay its buffered output.
    if (!response.headers.get('content-type')?.includes('application/x-ndjson')) {
      const result = (await response.json()) as ProcessResponse;
      if (result.stdout) emit(callbacks, 'stdout', result.stdout);
      if (result.stderr) emit(callbacks, 'stderr', result.stderr);
      return result;
    }
    let result: ProcessResponse | undefined;
    let failure: string | undefined;
    await readLines(response.body, (line) => {
      if (!line.trim()) return;
      const event = JSON.parse(line) as ProcessStreamEvent;
      if (event.type === 'stdout' || event.type === 'stderr') emit(callbacks, event.type, event.data);
      else if (event.type === 'result') result = JSON.parse(event.data) as ProcessResponse;
      else if (event.type === 'error') failure = event.data;
    });
    if (result) return result;
    throw new Error(`exec stream ended without a result${failure ? `: ${failure}` : ''}`);
  }

  get(identifier: string): Promise<ProcessResponse> {
    return this.http.json({ method: 'GET', path: `/process/${id(identifier)}` });
  }

  list(): Promise<ProcessResponse[]> {
    return this.http.json({ method: 'GET', path: '/process' });
  }

  async logs(identifier: string, stream: 'stdout' | 'stderr' | 'all' = 'all'): Promise<string> {
    const logs = await this.http.json<ProcessLogs>({
      method: 'GET',
      path: `/process/${id(identifier)}/logs`,
    });
    return stream === 'all' ? logs.logs : logs[stream];
  }

  /** Follows a process's output: replays what was written, then streams until it exits. */
  streamLogs(
    identifier: string,
    callbacks: OutputCallbacks & { onError?: (error: unknown) => void },
  ): LogStream {
    const abort = new AbortController();
    const done = (async () => {
      const response = await this.http.send({
        method: 'GET',
        path: `/process/${id(identifier)}/logs/stream`,
        signal: abort.signal,
      });
      await readLines(response.body, (line) => {
        if (line.includes('[keepalive]')) return;
        const match = /^(stdout|stderr):(.*)$/s.exec(line);
        if (match) emit(callbacks, match[1] as 'stdout' | 'stderr', `${match[2]}\n`);
      });
    })().catch((error: unknown) => {
      if (!abort.signal.aborted) callbacks.onError?.(error);
    });
    return { close: () => abort.abort(), done };
  }

  /** Polls until the process is no longer running (there is no wait endpoint upstream). */
  async wait(
    identifier: string,
    options: { maxWaitMs?: number; intervalMs?: number } = {},
  ): Promise<ProcessResponse> {
    const deadline = Date.now() + (options.maxWaitMs ?? 60_000);
    for (;;) {
      const process = await this.get(identifier);
      if (process.status !== 'running') return process;
      if (Date.now() > deadline) throw new TarmacTimeoutError(`process ${identifier} did not finish in time`);
      await sleep(options.intervalMs ?? 250);
    }
  }

  /** SIGTERM to the process group. */
  stop(identifier: string): Promise<{ message: string }> {
    return this.http.json({ method: 'DELETE', path: `/process/${id(identifier)}` });
  }

  /** SIGKILL to the process group. */
  kill(identifier: string): Promise<{ message: string }> {
    return this.http.json({ method: 'DELETE', path: `/process/${id(identifier)}/kill` });
  }
}
