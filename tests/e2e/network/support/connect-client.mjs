/* global Buffer, setTimeout, clearTimeout */
// Raw CONNECT through a proxy, then a plain-TCP echo round trip: what a non-HTTP client (a database
// driver, ssh, git://) does through HTTPS_PROXY. Prints one JSON line: {status, reply} or {status, body}.
// Usage: node connect-client.mjs <proxyHost> <proxyPort> <target host:port> <message>
import { connect } from 'node:net';

const [proxyHost, proxyPort, target, message] = process.argv.slice(2);
const socket = connect({ host: proxyHost, port: Number(proxyPort) });
let buffer = Buffer.alloc(0);
let status = 0;
const timer = setTimeout(() => finish({ status, error: 'timeout' }), 5000);
function finish(result) {
  clearTimeout(timer);
  process.stdout.write(JSON.stringify(result) + '\n');
  socket.destroy();
  process.exit(0);
}
socket.on('error', (e) => finish({ status, error: e.message }));
socket.on('connect', () => socket.write(`CONNECT ${target} HTTP/1.1\r\nHost: ${target}\r\n\r\n`));
socket.on('data', (chunk) => {
  buffer = Buffer.concat([buffer, chunk]);
  if (status === 0) {
    const end = buffer.indexOf('\r\n\r\n');
    if (end < 0) return;
    status = Number(/^HTTP\/1\.1 (\d{3})/.exec(buffer.toString('latin1'))?.[1] ?? 0);
    const rest = buffer.subarray(end + 4);
    buffer = rest;
    if (status !== 200) {
      socket.on('end', () => finish({ status, body: buffer.toString('utf8') }));
      return;
    }
    socket.write(message);
  }
  if (status === 200 && buffer.length >= Buffer.byteLength(message))
    finish({ status, reply: buffer.toString('utf8') });
});
socket.on('end', () => finish({ status, body: buffer.toString('utf8') }));
