// A minimal agent: the platform injects HOST and PORT (reference §5.1); it answers every request
// with a JSON greeting naming the input it got.
import http from 'node:http';

const server = http.createServer((req, res) => {
  let body = '';
  req.on('data', (chunk) => (body += chunk));
  req.on('end', () => {
    res.setHeader('content-type', 'application/json');
    res.end(JSON.stringify({ agent: 'node-agent', received: body }));
  });
});
server.listen(Number(process.env.PORT ?? 80), process.env.HOST ?? '::');
