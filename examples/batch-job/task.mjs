// One task of a batch job (reference §2.4 "Inside a task container"): its index is in the env var
// BL_TASK_KEY names (default TASK_INDEX); its arguments are tasks[index] of the JSON at
// BL_EXECUTION_DATA_URL. Node built-ins only: global fetch goes through the platform's egress
// proxy (the runtime's Node preload), and straight to the data URL (its host is in NO_PROXY).
//
// Arguments: {word, sleepSeconds, fail}. With REPORT_URL set, the task also reports its start and
// end there (POST /start and /end) and does what the /start answer says ("ok", "fail",
// "sleep N") — how the platform's e2e tests watch tasks from the outside. Reports go through
// HTTP_PROXY explicitly: the tests' receiver sits on the bridge gateway, which NO_PROXY names for
// the data URL.
import http from 'node:http';

const key = process.env.BL_TASK_KEY || 'TASK_INDEX';
const index = Number(process.env[key]);
const attempt = process.env.BL_TASK_ATTEMPT ?? '1';
const dataUrl = process.env.BL_EXECUTION_DATA_URL;
const report = process.env.REPORT_URL;

async function text(url, init) {
  const res = await fetch(url, { ...init, signal: AbortSignal.timeout(30_000) });
  const body = await res.text();
  if (!res.ok) throw new Error(`${init?.method ?? 'GET'} ${url}: ${res.status} ${body}`);
  return body;
}

/** POST through the egress proxy (an absolute-URI request with the task's proxy credentials). */
function postViaProxy(url, body, headers = {}) {
  const proxy = new URL(process.env.HTTP_PROXY || process.env.http_proxy || url);
  const user = `${decodeURIComponent(proxy.username)}:${decodeURIComponent(proxy.password)}`;
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        host: proxy.hostname,
        port: Number(proxy.port || 80),
        method: 'POST',
        path: url,
        timeout: 30_000,
        headers: {
          host: new URL(url).host,
          'content-length': Buffer.byteLength(body),
          ...(proxy.username
            ? { 'proxy-authorization': `Basic ${Buffer.from(user).toString('base64')}` }
            : {}),
          ...headers,
        },
      },
      (res) => {
        const chunks = [];
        res.on('data', (c) => chunks.push(c));
        res.on('end', () => {
          const answer = Buffer.concat(chunks).toString('utf8');
          if ((res.statusCode ?? 500) >= 400) reject(new Error(`POST ${url}: ${res.statusCode} ${answer}`));
          else resolve(answer);
        });
      },
    );
    req.on('timeout', () => req.destroy(new Error(`POST ${url}: timed out`)));
    req.on('error', reject);
    req.end(body);
  });
}

async function main() {
  const data = dataUrl ? await text(dataUrl) : '{"tasks":[]}';
  const args = JSON.parse(data).tasks?.[index] ?? {};
  let action = args.fail ? 'fail' : args.sleepSeconds ? `sleep ${args.sleepSeconds}` : 'ok';
  const query = new URLSearchParams({
    exec: process.env.BL_EXECUTION_ID ?? '',
    task: String(index),
    attempt,
    key,
  });
  if (report) {
    action = await postViaProxy(`${report}/start?${query}`, data, { 'x-data-url': dataUrl ?? '' });
  }
  console.log(`task ${index} attempt ${attempt}: ${action} ${args.word ?? ''}`.trim());
  if (action.startsWith('sleep ')) await new Promise((r) => setTimeout(r, Number(action.slice(6)) * 1000));
  if (report) await postViaProxy(`${report}/end?${query}`, 'x');
  if (action === 'fail') {
    console.log(`task ${index} failed on purpose`);
    process.exit(3);
  }
  console.log(`task ${index} done`);
}

main().catch((err) => {
  console.error(`task ${index}: ${err.message}${err.cause ? ` (${err.cause.message ?? err.cause})` : ''}`);
  process.exit(90);
});
