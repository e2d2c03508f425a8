'use strict';
/* global require, __dirname */
/* eslint-disable @typescript-eslint/no-require-imports -- a CommonJS file by design (vm.Script + code cache) */
// The sandboxd start-up loader, copied by scripts/bundle.mjs to dist/lib/sandboxd-boot.cjs and
// run by the engine as `node /.tarmac/lib/sandboxd-boot.cjs --port 8080` when present.
//
// Why: compiling the ~200 KB bundle is a large share of sandboxd's start (node 20 has no code
// cache for ES modules). This loader runs the CommonJS build of the same sources
// (lib/sandboxd.cjs) through vm.Script with V8's code cache (lib/sandboxd.cjs.cache), which the
// engine writes once per runtime dir on the host with the same node binary
// (`--write-code-cache <file>`). A missing or rejected cache (other node, other V8 flags such as a
// NODE_OPTIONS from the image) only costs the compile: the script runs either way.
//
// Measured (packages/sandboxd/ARCHITECTURE.md "Start-up"), host, clean env, interleaved runs:
// process start to listening, medians of 15: ESM bundle 65 ms, this loader without a cache 58 ms,
// with a compile-only cache 55 ms, with a cache written after the daemon was built 48.5 ms; spawn
// to the first /health 200 under load, medians of 20: ESM 191 ms, cache after build 114 ms, cache
// after build and one /health (what the engine writes) 93 ms.
const { readFileSync, writeFileSync } = require('node:fs');
const { join } = require('node:path');
const { pathToFileURL } = require('node:url');
const { Script } = require('node:vm');

const file = join(__dirname, 'sandboxd.cjs');
const cacheFile = `${file}.cache`;
const argv = process.argv.slice(2);
const writeAt = argv.indexOf('--write-code-cache');
const writeTo = writeAt >= 0 ? argv[writeAt + 1] : undefined;

let cachedData;
if (writeTo === undefined) {
  try {
    cachedData = readFileSync(cacheFile);
  } catch {
    cachedData = undefined; // no cache: compile
  }
}

// The bundle's own wrapper: CommonJS's five names, plus `__tarmacImport` for its one dynamic
// import (lib/mcp.mjs, ESM): vm scripts cannot import() by themselves without an experimental
// flag, so the import runs here, in a normal module, relative to /.tarmac like the ESM bundle's.
const wrapped =
  '(function (exports, require, module, __filename, __dirname, __tarmacImport) {' +
  readFileSync(file, 'utf8') +
  '\n})';
const script = new Script(wrapped, { filename: file, cachedData });
const mod = { exports: {} };
const load = (specifier) => import(pathToFileURL(join(__dirname, '..', specifier)).href);

if (writeTo !== undefined) {
  // Cache-writing mode (on the host, by the engine): build the daemon and answer one GET /health,
  // so the functions of start-up and of the first request are in the cache too. It listens on a
  // unix socket in a private directory instead of the port: nothing of sandboxd may be reachable
  // on the host.
  const http = require('node:http');
  const { mkdtempSync, rmSync } = require('node:fs');
  const { tmpdir } = require('node:os');
  const dir = mkdtempSync(join(tmpdir(), 'sandboxd-code-cache-'));
  const socket = join(dir, 'sandboxd.sock');
  const listen = http.Server.prototype.listen;
  http.Server.prototype.listen = function privateSocket() {
    return listen.call(this, socket, () => {
      const done = () => {
        writeFileSync(writeTo, script.createCachedData());
        rmSync(dir, { recursive: true, force: true });
        process.exit(0);
      };
      http
        .get({ socketPath: socket, path: '/health' }, (res) => res.resume().on('end', done))
        .on('error', done);
    });
  };
}
script.runInThisContext()(mod.exports, require, mod, file, __dirname, load);
