// The floor of any Node relay, for bench/model-gateway.ts: an HTTP server that forwards each
// request to one upstream origin over an undici pool (the platform gateway's client) and streams
// the answer back — no auth, no model lookup, no usage, no logging. Whatever throughput this
// reaches is the most a gateway written on Node's HTTP server and undici can reach on this host.
//
//   node bench/support/bare-relay.mjs <upstream origin> <auth header value>   (prints its port)
import { createServer } from 'node:http';
import { Pool } from 'undici';

const [origin, auth] = process.argv.slice(2);
if (!origin || !auth) throw new Error('usage: bare-relay.mjs <upstream origin> <authorization>');
const pool = new Pool(origin, { connections: 64, pipelining: 1 });

const server = createServer((req, res) => {
  pool.dispatch(
    {
      path: req.url ?? '/',
      method: req.method ?? 'GET',
      headers: {
        'content-type': req.headers['content-type'] ?? 'application/json',
        'content-length': req.headers['content-length'] ?? '0',
        authorization: auth,
      },
      body: req,
    },
    {
      onConnect() {},
      onError(err) {
        res.destroy(err);
      },
      onHeaders(status, rawHeaders) {
        const headers = {};
        for (let i = 0; i < rawHeaders.length; i += 2) {
          const name = rawHeaders[i].toString().toLowerCase();
          if (name !== 'connection' && name !== 'keep-alive' && name !== 'transfer-encoding')
            headers[name] = rawHeaders[i + 1].toString();
        }
        res.writeHead(status, headers);
        return true;
      },
      onData(chunk) {
        res.write(chunk); // answers here are small: no back-pressure bookkeeping
        return true;
      },
      onComplete() {
        res.end();
      },
    },
  );
});
server.keepAliveTimeout = 65_000;
server.listen(0, '127.0.0.1', () => {
  const address = server.address();
  process.stdout.write(`${typeof address === 'object' && address ? address.port : 0}\n`);
});
