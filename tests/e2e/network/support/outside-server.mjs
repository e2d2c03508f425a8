/* global Buffer */
// "The outside world" for egress tests, run inside its own network namespace: an HTTP server, an
// HTTPS server (certificate from the test's own CA), an HTTPS server with an untrusted certificate,
// a TCP echo server, and a control port where the test reads what the upstreams received.
// Usage: node outside-server.mjs '<json config>'; prints "ready" when every port listens.
import { readFileSync } from 'node:fs';
import { createServer as createHttp } from 'node:http';
import { createServer as createHttps } from 'node:https';
import { createServer as createTcp } from 'node:net';

const config = JSON.parse(process.argv[2]);
const seen = [];

function recorder(scheme) {
  return (req, res) => {
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      seen.push({
        scheme,
        host: req.headers.host,
        method: req.method,
        url: req.url,
        headers: req.headers,
        body,
      });
      // Answer without echoing headers or body: whatever the proxy injected must not flow back.
      const out = JSON.stringify({ ok: true, scheme, url: req.url, bodyBytes: body.length });
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(out) });
      res.end(out);
    });
  };
}

const servers = [
  [createHttp(recorder('http')), config.httpPort],
  [
    createHttps({ cert: readFileSync(config.cert), key: readFileSync(config.key) }, recorder('https')),
    config.httpsPort,
  ],
  [
    createHttps(
      { cert: readFileSync(config.badCert), key: readFileSync(config.badKey) },
      recorder('bad-https'),
    ),
    config.badHttpsPort,
  ],
  [
    createTcp((s) => {
      s.on('error', () => {});
      s.pipe(s);
    }),
    config.tcpPort,
  ],
  [
    createHttp((req, res) => {
      const out = JSON.stringify(seen);
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(out);
    }),
    config.controlPort,
  ],
];
await Promise.all(
  servers.map(
    ([s, port]) =>
      new Promise((resolve, reject) => {
        s.once('error', reject);
        s.listen(port, config.bind, resolve);
      }),
  ),
);
process.stdout.write('ready\n');
process.on('SIGTERM', () => process.exit(0));
