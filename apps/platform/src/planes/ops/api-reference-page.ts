import type { OpenApiDocument } from '@tarmac/contract';

/**
 * A self-contained, human-readable API reference rendered from the OpenAPI document on the server:
 * no script, no CDN, so it works offline on a laptop. Operations are grouped by tag; each shows its
 * parameters, request body and responses, with schemas as collapsible JSON.
 */
const escape = (text: string) =>
  text.replace(
    /[&<>"']/g,
    (ch) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[ch]!,
  );

interface Operation {
  operationId: string;
  summary?: string;
  tags?: string[];
  parameters?: { name: string; in: string; required?: boolean; description?: string; schema?: unknown }[];
  requestBody?: { content: Record<string, { schema: unknown }> };
  responses: Record<string, { description: string; content?: Record<string, { schema: unknown }> }>;
  security?: unknown[];
}

const json = (value: unknown) =>
  `<details><summary>schema</summary><pre>${escape(JSON.stringify(value, null, 2))}</pre></details>`;

function renderOperation(method: string, path: string, op: Operation): string {
  const params = (op.parameters ?? [])
    .map(
      (p) =>
        `<tr><td><code>${escape(p.name)}</code></td><td>${p.in}</td><td>${p.required ? 'yes' : ''}</td><td>${escape(p.description ?? '')}</td></tr>`,
    )
    .join('');
  const body = op.requestBody
    ? `<h4>Body</h4>${Object.entries(op.requestBody.content)
        .map(([type, media]) => `<p><code>${type}</code></p>${json(media.schema)}`)
        .join('')}`
    : '';
  const responses = Object.entries(op.responses)
    .map(
      ([status, r]) =>
        `<li><b>${status}</b> ${escape(r.description)}${r.content ? json(Object.values(r.content)[0]?.schema) : ''}</li>`,
    )
    .join('');
  return `<section class="op" id="${escape(op.operationId)}">
  <h3><span class="m ${method}">${method.toUpperCase()}</span> <code>${escape(path)}</code></h3>
  <p>${escape(op.summary ?? '')}${op.security?.length === 0 ? ' <em>(no authentication)</em>' : ''}</p>
  ${params ? `<table><tr><th>parameter</th><th>in</th><th>required</th><th></th></tr>${params}</table>` : ''}
  ${body}<h4>Responses</h4><ul>${responses}</ul></section>`;
}

export function renderApiReference(doc: OpenApiDocument): string {
  const info = doc.info as { title: string; version: string; description?: string };
  const byTag = new Map<string, string[]>();
  for (const [path, item] of Object.entries(doc.paths)) {
    for (const [method, op] of Object.entries(item as Record<string, Operation>)) {
      const tag = op.tags?.[0] ?? 'other';
      byTag.set(tag, [...(byTag.get(tag) ?? []), renderOperation(method, path, op)]);
    }
  }
  const nav = [...byTag.keys()].map((tag) => `<a href="#tag-${escape(tag)}">${escape(tag)}</a>`).join(' · ');
  const sections = [...byTag.entries()]
    .map(([tag, ops]) => `<h2 id="tag-${escape(tag)}">${escape(tag)}</h2>${ops.join('')}`)
    .join('');
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${escape(info.title)} reference</title>
<style>body{font:15px/1.5 system-ui,sans-serif;max-width:960px;margin:2em auto;padding:0 1em;color:#222}
code,pre{font-family:ui-monospace,monospace}pre{background:#f5f5f5;padding:.6em;overflow:auto;font-size:12px}
.op{border-top:1px solid #ddd;padding:.5em 0}.m{font-size:12px;padding:2px 6px;border-radius:3px;color:#fff;background:#555}
.get{background:#2a7}.post{background:#27a}.put{background:#a72}.delete{background:#a33}
table{border-collapse:collapse}td,th{border:1px solid #ddd;padding:2px 8px;text-align:left;font-size:13px}</style></head>
<body><h1>${escape(info.title)} <small>${escape(info.version)}</small></h1><p>${escape(info.description ?? '')}</p>
<p>Machine-readable: <a href="/v0/openapi.json">/v0/openapi.json</a> (OpenAPI ${escape(String(doc.openapi))}).</p>
<nav>${nav}</nav>${sections}</body></html>`;
}
