// GET /terminal (reference sandbox-api.md §1.6): a small xterm.js page speaking /terminal/ws.
export const TERMINAL_PAGE = `<!doctype html>
<html><head><meta charset="utf-8"><title>Sandbox terminal</title>
<link rel="stylesheet" href="https://cdn.jsdelivr.net/npm/@xterm/xterm@5.5.0/css/xterm.min.css">
<style>html,body,#t{margin:0;height:100%;background:#000}</style></head>
<body><div id="t"></div>
<script src="https://cdn.jsdelivr.net/npm/@xterm/xterm@5.5.0/lib/xterm.min.js"></script>
<script>
const term = new Terminal(); term.open(document.getElementById('t'));
const q = new URLSearchParams(location.search);
q.set('cols', term.cols); q.set('rows', term.rows);
const ws = new WebSocket(location.href.replace(/^http/, 'ws').replace(/\\/terminal.*$/, '/terminal/ws?') + q);
ws.onmessage = (e) => { const m = JSON.parse(e.data); if (m.type === 'output') term.write(m.data); };
term.onData((d) => ws.send(JSON.stringify({ type: 'input', data: d })));
term.onResize(({ cols, rows }) => ws.send(JSON.stringify({ type: 'resize', cols, rows })));
</script></body></html>`;
