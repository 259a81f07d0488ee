"""A small local server speaking the Hugging Face Hub's resolve API, for offline download tests.

``GET``/``HEAD /{namespace}/{name}/resolve/{revision}/{filename}`` serves files from
``root/{namespace}/{name}/``; ``GET /api/models/{namespace}/{name}/revision/{revision}`` and
``.../tree/{revision}`` describe the repo (what ``snapshot_download`` asks first); anything else is
a 404 with the Hub's error header.
"""

from __future__ import annotations

import hashlib
import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

COMMIT = "0123456789abcdef0123456789abcdef01234567"


def serve(root: Path) -> tuple[ThreadingHTTPServer, str]:
    """Start the server on 127.0.0.1 (a free port) in a thread; returns ``(server, endpoint)``."""

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args):  # keep test output clean
            pass

        def _file(self) -> Path | None:
            parts = self.path.split("?")[0].strip("/").split("/")
            if len(parts) >= 5 and parts[2] == "resolve":
                path = root / parts[0] / parts[1] / "/".join(parts[4:])
                if path.is_file():
                    return path
            return None

        def _headers(self, path: Path | None) -> bytes:
            if path is None:
                self.send_response(404)
                self.send_header("X-Error-Code", "EntryNotFound")
                self.send_header("X-Error-Message", "Entry not found")
                self.send_header("Content-Length", "0")
                self.end_headers()
                return b""
            data = path.read_bytes()
            self.send_response(200)
            self.send_header("Content-Length", str(len(data)))
            self.send_header("ETag", '"' + hashlib.sha256(data).hexdigest() + '"')
            self.send_header("X-Repo-Commit", COMMIT)
            self.send_header("Content-Type", "application/octet-stream")
            self.end_headers()
            return data

        def do_HEAD(self):  # noqa: N802
            self._headers(self._file())

        def _api(self) -> bytes | None:
            parts = self.path.split("?")[0].strip("/").split("/")
            if len(parts) < 6 or parts[:2] != ["api", "models"] or parts[4] not in ("revision", "tree"):
                return None
            repo = root / parts[2] / parts[3]
            if not repo.is_dir():
                return None
            files = sorted(p for p in repo.rglob("*") if p.is_file())
            if parts[4] == "revision":
                body = {"id": f"{parts[2]}/{parts[3]}", "sha": COMMIT,
                        "siblings": [{"rfilename": str(p.relative_to(repo))} for p in files]}
            else:
                body = [{"type": "file", "path": str(p.relative_to(repo)), "size": p.stat().st_size,
                         "oid": hashlib.sha1(p.read_bytes()).hexdigest()} for p in files]
            return json.dumps(body).encode()

        def do_GET(self):  # noqa: N802
            api = self._api()
            if api is not None:
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(api)))
                self.end_headers()
                self.wfile.write(api)
                return
            data = self._headers(self._file())
            if data:
                self.wfile.write(data)

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_address[1]}"
