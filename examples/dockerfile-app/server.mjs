// Serves the version baked in at build time (RUN echo "$APP_VERSION" > /srv/VERSION).
import http from 'node:http';
import fs from 'node:fs';

const version = fs.readFileSync('/srv/VERSION', 'utf8').trim();
http
  .createServer((_req, res) => res.end(`dockerfile-app ${version}\n`))
  .listen(Number(process.env.PORT ?? 8080), process.env.HOST ?? '::');
