"""A small local server speaking the Hugging Face Hub's resolve API, for offline download tests.

``GET``/``HEAD /{namespace}/{name}/resolve/{revision}/{filename}`` serves files from
``root/{namespace}/{name}/``; ``GET /api/models/{namespace}/{name}/revision/{revision}`` and
``.../tree/{revision}`` describe the repo (what ``snapshot_download`` asks first); anything else is
a 404 with the Hub's error header.

Dataset repos (``repo_type="dataset"``) are the same under ``/datasets/...`` and ``/api/datasets/...``,
stored in ``root/datasets/{namespace}/{name}/``.

Uploads speak what ``HfApi.create_repo`` and ``HfApi.upload_folder`` send (huggingface_hub 1.x–2.x):
``POST /api/repos/create`` (``{"name", "organization", ...}``; 409 with the repo's URL if it exists),
``POST /api/validate-yaml`` (the model card's metadata, always accepted),
``POST /api/models/{ns}/{name}/preupload/{revision}`` (every file is answered ``"regular"``, so no
LFS or Xet transfer is needed) and ``POST /api/models/{ns}/{name}/commit/{revision}`` (ndjson: a
``header`` line, then ``file`` lines with base64 content). Writes need ``Authorization: Bearer <token>``
with a token in ``tokens``; otherwise 401, as on the Hub.
"""

from __future__ import annotations

import base64
import hashlib
import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

COMMIT = "0123456789abcdef0123456789abcdef01234567"


def serve(root: Path, tokens: frozenset[str] = frozenset()) -> tuple[ThreadingHTTPServer, str]:
    """Start the server on 127.0.0.1 (a free port) in a thread; returns ``(server, endpoint)``.

    ``tokens`` are the write tokens the server accepts; ``server.commits`` lists ``(repo, summary, paths)``.
    """
    commits: list[tuple[str, str, list[str]]] = []

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args):  # keep test output clean
            pass

        def _file(self) -> Path | None:
            parts = self.path.split("?")[0].strip("/").split("/")
            base = root
            if parts[0] == "datasets":
                base, parts = root / "datasets", parts[1:]
            if len(parts) >= 5 and parts[2] == "resolve":
                path = base / parts[0] / parts[1] / "/".join(parts[4:])
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
            if len(parts) < 6 or parts[:2] not in (["api", "models"], ["api", "datasets"]) \
                    or parts[4] not in ("revision", "tree"):
                return None
            repo = (root / "datasets" if parts[1] == "datasets" else root) / parts[2] / parts[3]
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

        def _reply(self, status: int, body: object = None, error: str = "") -> None:
            data = json.dumps(body if body is not None else {"error": error}).encode()
            self.send_response(status)
            if error:
                self.send_header("X-Error-Message", error)
                if status == 404:
                    self.send_header("X-Error-Code", "RepoNotFound")
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_POST(self):  # noqa: N802
            body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
            if self.path.split("?")[0] == "/api/validate-yaml":  # the model card's metadata: accepted
                return self._reply(200, {"warnings": []})
            auth = self.headers.get("Authorization", "")
            if not auth.startswith("Bearer ") or auth[len("Bearer "):] not in tokens:
                return self._reply(401, error="Invalid credentials in Authorization header")
            endpoint = f"http://{self.headers['Host']}"
            parts = self.path.split("?")[0].strip("/").split("/")
            if parts == ["api", "repos", "create"]:
                payload = json.loads(body)
                repo_id = f"{payload['organization']}/{payload['name']}"
                repo = (root / "datasets" if payload.get("type") == "dataset" else root) / repo_id
                if repo.is_dir():
                    message = "You already created this model repo"  # the Hub names the repo's URL, as here
                    return self._reply(409, {"error": message, "url": f"{endpoint}/{repo_id}"}, error=message)
                repo.mkdir(parents=True)
                return self._reply(200, {"url": f"{endpoint}/{repo_id}", "name": repo_id})
            if len(parts) < 6 or parts[:2] not in (["api", "models"], ["api", "datasets"]) \
                    or parts[4] not in ("preupload", "commit"):
                return self._reply(404, error="Not found")
            repo_id = f"{parts[2]}/{parts[3]}"
            repo = (root / "datasets" if parts[1] == "datasets" else root) / repo_id
            if not repo.is_dir():
                return self._reply(404, error=f"Repository {repo_id} not found")
            if parts[4] == "preupload":
                files = json.loads(body)["files"]
                return self._reply(200, {"files": [
                    {"path": f["path"], "uploadMode": "regular", "shouldIgnore": False, "oid": None} for f in files
                ]})
            summary, paths = "", []
            for line in body.splitlines():
                item = json.loads(line)
                if item["key"] == "header":
                    summary = item["value"]["summary"]
                elif item["key"] == "file":
                    target = (repo / item["value"]["path"]).resolve()
                    if repo.resolve() not in target.parents:
                        return self._reply(400, error="path outside the repo")
                    target.parent.mkdir(parents=True, exist_ok=True)
                    target.write_bytes(base64.b64decode(item["value"]["content"]))
                    paths.append(item["value"]["path"])
                else:
                    return self._reply(400, error=f"unsupported commit operation {item['key']}")
            commits.append((repo_id, summary, paths))
            return self._reply(200, {"commitUrl": f"{endpoint}/{repo_id}/commit/{COMMIT}", "commitOid": COMMIT})

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.commits = commits  # type: ignore[attr-defined]
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_address[1]}"
