"""A minimal Tarmac agent in Python: answers every request with a JSON greeting (stdlib only)."""
import json
import os
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class Agent(BaseHTTPRequestHandler):
    def do_POST(self):
        length = int(self.headers.get("content-length") or 0)
        body = self.rfile.read(length).decode()
        payload = json.dumps({"agent": "python-agent", "received": body}).encode()
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.end_headers()
        self.wfile.write(payload)

    do_GET = do_POST


ThreadingHTTPServer((os.environ.get("HOST", "0.0.0.0"), int(os.environ.get("PORT", "80"))), Agent).serve_forever()
