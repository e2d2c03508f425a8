// /process routes (reference sandbox-api.md §1.3, §6.2–6.5).
import { statSync, type Stats } from 'node:fs';
import { stat } from 'node:fs/promises';
import type { Hono } from 'hono';
import { processRequestSchema, type ProcessStreamEvent } from '@tarmac/contract';
import { guardBodyIdle, jsonBody, nodeRequest, readBytesCapped } from '../http/body.js';
import { LIMITS } from '../http/limits.js';
import { badRequest, errorMessage } from '../http/errors.js';
import { streamHeaders, type StreamBudget } from '../http/stream.js';
import { resolveUserPath, type PathContext } from '../fs/paths.js';
import { keepAliveTimeout, type ManagedProcess, type ProcessManager } from './manager.js';
import { LinePrefixer } from './line-prefixer.js';
import { waitFor } from './wait.js';
import type { StreamName } from './logs.js';

export interface ProcessRouteOptions {
  procRoot: string;
  keepaliveMs: { logs: number; exec: number };
  streams: StreamBudget;
}

export function processRoutes(app: Hono, pm: ProcessManager, ctx: PathContext, o: ProcessRouteOptions): void {
  app.post('/process', async (c) => {
    const req = await jsonBody(c, processRequestSchema);
    const workingDir = req.workingDir ? resolveUserPath(req.workingDir, ctx) : ctx.workingDir;
    // The default one is sandboxd's own directory on the sandbox's disk: a synchronous stat takes
    // microseconds, where the thread pool's round trip took 1-5 ms on a loaded host (issue 20).
    const st = req.workingDir ? await stat(workingDir).catch(() => undefined) : statSafe(workingDir);
    if (!st?.isDirectory()) throw badRequest(`working directory does not exist: ${workingDir}`);
    const streamed = (c.req.header('accept') ?? '').includes('text/event-stream');
    if (streamed) o.streams.check(); // before the process starts: a refusal leaves nothing behind
    const proc = await pm.start(req, workingDir);
    const wait = {
      waitForCompletion: req.waitForCompletion ?? false,
      waitForPorts: req.waitForPorts ?? [],
      timeout: req.keepAlive ? keepAliveTimeout(req) : req.timeout,
      procRoot: o.procRoot,
    };
    if (streamed) {
      return new Response(execStream(o.streams, proc, wait, o.keepaliveMs.exec), {
        headers: streamHeaders('application/x-ndjson'),
      });
    }
    await waitFor(proc, wait);
    return c.json(proc.toResponse());
  });

  app.get('/process', (c) => c.json(pm.list().map((p) => p.toResponse(true))));
  app.get('/process/:id', (c) => c.json(pm.get(c.req.param('id')).toResponse()));

  app.get('/process/:id/logs', (c) => {
    const p = pm.get(c.req.param('id'));
    return c.json({
      stdout: p.logs.read('stdout'),
      stderr: p.logs.read('stderr'),
      logs: p.logs.read('combined'),
    });
  });

  app.get('/process/:id/logs/stream', (c) => {
    const p = pm.get(c.req.param('id'));
    o.streams.check();
    return new Response(logStream(o.streams, p, o.keepaliveMs.logs), {
      headers: streamHeaders('text/plain; charset=utf-8'),
    });
  });

  // The vendor SDK's writeStdin / closeStdin (issue 14 item 6): raw bytes, bounded, no JSON.
  app.post('/process/:id/stdin', async (c) => {
    const id = c.req.param('id');
    pm.get(id); // 404 before reading a body for nothing
    const unguard = guardBodyIdle(nodeRequest(c.env));
    const data = await readBytesCapped(c.req.raw, LIMITS.stdinBodyBytes).finally(unguard);
    await pm.writeStdin(id, data, LIMITS.stdinDrainMs);
    return c.json({ message: `${data.length} bytes written to stdin` });
  });
  app.delete('/process/:id/stdin', (c) => {
    pm.closeStdin(c.req.param('id'));
    return c.json({ message: 'Stdin closed' });
  });

  app.delete('/process/:id', (c) => {
    pm.stop(c.req.param('id'));
    return c.json({ message: 'Process stopped successfully' });
  });
  app.delete('/process/:id/kill', (c) => {
    pm.kill(c.req.param('id'));
    return c.json({ message: 'Process killed successfully' });
  });
}

/**
 * Replays the log files, then follows live output, prefixed per stream, with `[keepalive]` lines
 * while running; ends once the process is final. Replay and subscribe happen in one tick (the
 * files are written synchronously), so nothing is lost or repeated.
 */
function logStream(
  streams: StreamBudget,
  p: ManagedProcess,
  keepaliveMs: number,
): ReadableStream<Uint8Array> {
  return streams.stream((sink) => {
    const lines = new LinePrefixer((t) => sink.push(t));
    lines.push('stdout', p.logs.read('stdout'));
    lines.push('stderr', p.logs.read('stderr'));
    const onOutput = (s: StreamName, chunk: Buffer): void => lines.push(s, chunk.toString('utf8'));
    const onExit = (): void => {
      lines.flush();
      sink.close();
    };
    const timer = setInterval(() => sink.push('[keepalive]\n'), keepaliveMs);
    p.on('output', onOutput);
    p.once('exit', onExit);
    if (!p.running) queueMicrotask(onExit);
    return () => {
      clearInterval(timer);
      p.off('output', onOutput);
      p.off('exit', onExit);
    };
  });
}

/** Streamed exec: NDJSON events, keepalive every interval, last event `result` (§1.3, §6.2). */
function execStream(
  streams: StreamBudget,
  p: ManagedProcess,
  wait: Parameters<typeof waitFor>[1],
  keepaliveMs: number,
): ReadableStream<Uint8Array> {
  return streams.stream((sink) => {
    const send = (e: ProcessStreamEvent): void => sink.push(JSON.stringify(e) + '\n');
    const onOutput = (s: StreamName, chunk: Buffer): void => send({ type: s, data: chunk.toString('utf8') });
    p.on('output', onOutput);
    const timer = setInterval(() => send({ type: 'keepalive', data: '' }), keepaliveMs);
    // Without waitForCompletion the stream still follows the process to its end.
    waitFor(p, { ...wait, waitForCompletion: true })
      .then(
        () => send({ type: 'result', data: JSON.stringify(p.toResponse()) }),
        (err: unknown) => send({ type: 'error', data: errorMessage(err) }),
      )
      .finally(() => sink.close());
    return () => {
      clearInterval(timer);
      p.off('output', onOutput);
    };
  });
}

function statSafe(path: string): Stats | undefined {
  try {
    return statSync(path);
  } catch {
    return undefined;
  }
}
