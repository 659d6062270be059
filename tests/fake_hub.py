"""A small fake of the Hugging Face Hub on loopback, for dataset repositories.

Written from the requests the installed `huggingface_hub` and `datasets`
clients make (read in their source: `hf_api.py`, `_commit_api.py`,
`file_download.py`, `hf_file_system.py`), so the real clients talk to it over
HTTP with `HF_ENDPOINT` pointed here:

- `POST /api/repos/create`: a new (empty) dataset repository;
- `POST /api/validate-yaml`: the dataset card's metadata (a README.md in a commit);
- `GET  /api/agent-harnesses`: the client's registry of coding agents (empty);
- `GET  /api/datasets/{repo}[/revision/{rev}]`: repository info with its files (`siblings`);
- `GET  /api/datasets/{repo}/tree/{rev}[/{path}]`: the file listing (`recursive` honoured);
- `POST /api/datasets/{repo}/paths-info/{rev}`: information about given paths;
- `POST /api/datasets/{repo}/preupload/{rev}`: every file uploads as a regular blob;
- `POST /api/datasets/{repo}/commit/{rev}`: the NDJSON commit (base64 file contents);
- `HEAD|GET /datasets/{repo}/resolve/{rev}/{path}`: a file, with `Range` support.

Writes need `Authorization: Bearer <token>` with the server's token; reads of a
private repository too. Every request is recorded (`requests`) so tests can
see what the clients called and with which headers. Only one revision
(`main`) exists; each commit replaces the files it names.
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, unquote, urlparse


@dataclass
class Repo:
    private: bool = False
    files: dict[str, bytes] = field(default_factory=dict)
    commits: int = 0

    @property
    def sha(self) -> str:
        digest = hashlib.sha1(f"{self.commits}".encode())  # noqa: S324 - a fake commit id, not security
        for path in sorted(self.files):
            digest.update(path.encode() + b"\0" + self.files[path])
        return digest.hexdigest()


def _oid(content: bytes) -> str:
    return hashlib.sha1(b"blob %d\0" % len(content) + content).hexdigest()  # noqa: S324 - git's blob id


class FakeHub:
    def __init__(self, token: str) -> None:
        self.token = token
        self.repos: dict[str, Repo] = {}
        self.requests: list[tuple[str, str, dict[str, str]]] = []
        self.lock = threading.Lock()
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, name="fake-hub", daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def start(self) -> FakeHub:
        self.thread.start()
        return self

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()

    def add_files(self, repo_id: str, files: dict[str, bytes], *, private: bool = False) -> None:
        """Put a repository on the fake Hub directly (as if someone had pushed it)."""
        with self.lock:
            repo = self.repos.setdefault(repo_id, Repo(private=private))
            repo.files.update(files)
            repo.commits += 1

    def paths(self) -> list[str]:
        return [path for _, path, _ in self.requests]

    # -- the handler -----------------------------------------------------------

    def _handler(self):
        hub = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args) -> None:  # quiet
                return

            def do_GET(self) -> None:
                self._route("GET")

            def do_HEAD(self) -> None:
                self._route("HEAD")

            def do_POST(self) -> None:
                self._route("POST")

            # -- plumbing --------------------------------------------------------

            def _body(self) -> bytes:
                length = int(self.headers.get("Content-Length") or 0)
                return self.rfile.read(length) if length else b""

            def _send(self, status: int, body: bytes = b"", headers: dict[str, str] | None = None) -> None:
                self.send_response(status)
                for key, value in (headers or {}).items():
                    self.send_header(key, value)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                if self.command != "HEAD":
                    self.wfile.write(body)

            def _json(self, status: int, value, headers: dict[str, str] | None = None) -> None:
                self._send(status, json.dumps(value).encode(), {"Content-Type": "application/json", **(headers or {})})

            def _error(self, status: int, message: str) -> None:
                self._json(status, {"error": message}, {"X-Error-Message": message})

            def _authorised(self) -> bool:
                return self.headers.get("Authorization", "") == f"Bearer {hub.token}"

            def _repo(self, repo_id: str, *, write: bool = False) -> Repo | None:
                repo = hub.repos.get(repo_id)
                if repo is None or ((repo.private or write) and not self._authorised()):
                    self._error(404 if not write or repo is None else 401, "Repository not found")
                    return None
                return repo

            def _route(self, method: str) -> None:
                url = urlparse(self.path)
                path = unquote(url.path)
                query = parse_qs(url.query)
                with hub.lock:
                    hub.requests.append((method, self.path, {k.lower(): v for k, v in self.headers.items()}))
                body = self._body() if method == "POST" else b""
                with hub.lock:
                    self._dispatch(method, path, query, body)

            def _dispatch(self, method: str, path: str, query: dict[str, list[str]], body: bytes) -> None:
                if method == "POST" and path == "/api/repos/create":
                    return self._create(json.loads(body or b"{}"))
                if method == "POST" and path == "/api/validate-yaml":
                    return self._validate_yaml(json.loads(body or b"{}"))
                if method == "GET" and path == "/api/agent-harnesses":  # the client's registry: empty here
                    return self._json(200, {"standardEnvVars": [], "harnesses": {}})
                m = re.fullmatch(r"/api/datasets/([^/]+/[^/]+)/(preupload|commit|paths-info)/([^/]+)", path)
                if m and method == "POST":
                    repo = self._repo(m[1], write=m[2] != "paths-info")
                    if repo is None:
                        return None
                    if m[2] == "preupload":
                        return self._preupload(json.loads(body))
                    if m[2] == "commit":
                        return self._commit(m[1], repo, body)
                    return self._paths_info(repo, body)
                m = re.fullmatch(r"/api/datasets/([^/]+/[^/]+)/tree/([^/]+)(?:/(.*))?", path)
                if m and method == "GET":
                    repo = self._repo(m[1])
                    if repo is None:
                        return None
                    recursive = (query.get("recursive") or ["false"])[0].lower() in ("1", "true")
                    return self._json(200, self._tree(repo, (m[3] or "").strip("/"), recursive))
                m = re.fullmatch(r"/api/datasets/([^/]+/[^/]+)(?:/revision/([^/]+))?", path)
                if m and method == "GET":
                    repo = self._repo(m[1])
                    if repo is None:
                        return None
                    return self._json(200, self._info(m[1], repo))
                m = re.fullmatch(r"/datasets/([^/]+/[^/]+)/resolve/([^/]+)/(.+)", path)
                if m and method in ("GET", "HEAD"):
                    repo = self._repo(m[1])
                    if repo is None:
                        return None
                    return self._resolve(repo, m[3])
                return self._error(404, f"no such endpoint on the fake hub: {method} {path}")

            # -- endpoints -------------------------------------------------------

            def _create(self, payload: dict) -> None:
                if not self._authorised():
                    return self._error(401, "Invalid credentials in Authorization header")
                if payload.get("type") != "dataset":
                    return self._error(400, "the fake hub holds dataset repositories only")
                repo_id = f"{payload.get('organization') or 'user'}/{payload['name']}"
                url = f"{hub.url}/datasets/{repo_id}"
                if repo_id in hub.repos:
                    return self._json(409, {"error": "You already created this dataset repo", "url": url})
                hub.repos[repo_id] = Repo(
                    private=payload.get("visibility") == "private" or bool(payload.get("private"))
                )
                return self._json(200, {"url": url, "name": repo_id})

            def _validate_yaml(self, payload: dict) -> None:
                """The card's metadata must be a YAML mapping (the real Hub checks more)."""
                import yaml

                card = payload.get("content") or ""
                front = re.match(r"\A---\r?\n(.*?)\r?\n---\r?\n", card, re.DOTALL)
                try:
                    meta = yaml.safe_load(front[1] if front else "")
                except yaml.YAMLError as exc:
                    return self._json(400, {"errors": [{"message": str(exc)}]}, {"X-Error-Message": "Invalid YAML"})
                if not isinstance(meta, dict):
                    return self._json(400, {"errors": [{"message": "metadata is not a mapping"}]})
                return self._json(200, {"errors": [], "warnings": []})

            def _preupload(self, payload: dict) -> None:
                files = [
                    {"path": f["path"], "uploadMode": "regular", "shouldIgnore": False, "oid": None}
                    for f in payload.get("files", [])
                ]
                return self._json(200, {"files": files, "commitOid": None})

            def _commit(self, repo_id: str, repo: Repo, body: bytes) -> None:
                for line in body.split(b"\n"):
                    if not line.strip():
                        continue
                    item = json.loads(line)
                    if item["key"] == "file":
                        value = item["value"]
                        content = value["content"]
                        data = base64.b64decode(content) if value.get("encoding") == "base64" else content.encode()
                        repo.files[value["path"]] = data
                    elif item["key"] == "deletedFile":
                        repo.files.pop(item["value"]["path"], None)
                    elif item["key"] not in ("header",):
                        return self._error(400, f"the fake hub takes regular files only, not {item['key']}")
                repo.commits += 1
                sha = repo.sha
                return self._json(200, {"commitUrl": f"{hub.url}/datasets/{repo_id}/commit/{sha}", "commitOid": sha})

            def _entry(self, repo: Repo, path: str) -> dict:
                content = repo.files[path]
                return {"type": "file", "path": path, "size": len(content), "oid": _oid(content)}

            def _tree(self, repo: Repo, under: str, recursive: bool) -> list[dict]:
                prefix = f"{under}/" if under else ""
                out: list[dict] = []
                folders: set[str] = set()
                for path in sorted(repo.files):
                    if not path.startswith(prefix):
                        continue
                    rest = path[len(prefix) :]
                    parts = rest.split("/")
                    for depth in range(1, len(parts)):
                        folder = prefix + "/".join(parts[:depth])
                        if folder not in folders and (recursive or depth == 1):
                            folders.add(folder)
                            out.append({"type": "directory", "path": folder, "oid": _oid(folder.encode())})
                    if recursive or len(parts) == 1:
                        out.append(self._entry(repo, path))
                return out

            def _paths_info(self, repo: Repo, body: bytes) -> None:
                form = parse_qs(body.decode())
                wanted = form.get("paths", [])
                if not wanted and body.strip().startswith(b"{"):
                    wanted = json.loads(body).get("paths", [])
                out = []
                for path in wanted:
                    if path in repo.files:
                        out.append(self._entry(repo, path))
                    elif any(f.startswith(path.rstrip("/") + "/") for f in repo.files):
                        out.append({"type": "directory", "path": path, "oid": _oid(path.encode())})
                return self._json(200, out)

            def _info(self, repo_id: str, repo: Repo) -> dict:
                return {
                    "_id": hashlib.md5(repo_id.encode()).hexdigest()[:24],  # noqa: S324 - an id, not security
                    "id": repo_id,
                    "author": repo_id.split("/")[0],
                    "sha": repo.sha,
                    "private": repo.private,
                    "disabled": False,
                    "gated": False,
                    "downloads": 0,
                    "likes": 0,
                    "tags": [],
                    "siblings": [{"rfilename": p, "size": len(c)} for p, c in sorted(repo.files.items())],
                    "lastModified": "2026-01-01T00:00:00.000Z",
                    "createdAt": "2026-01-01T00:00:00.000Z",
                }

            def _resolve(self, repo: Repo, path: str) -> None:
                if path not in repo.files:
                    return self._send(
                        404, b"Entry not found", {"X-Error-Code": "EntryNotFound", "X-Error-Message": "Entry not found"}
                    )
                content = repo.files[path]
                headers = {
                    "ETag": f'"{_oid(content)}"',
                    "X-Repo-Commit": repo.sha,
                    "Accept-Ranges": "bytes",
                    "Content-Type": "application/octet-stream",
                }
                ranged = re.fullmatch(r"bytes=(\d+)-(\d*)", self.headers.get("Range", "").strip())
                if ranged:
                    start = int(ranged[1])
                    end = min(int(ranged[2]) if ranged[2] else len(content) - 1, len(content) - 1)
                    if start >= len(content):
                        return self._send(416, b"", {"Content-Range": f"bytes */{len(content)}"})
                    headers["Content-Range"] = f"bytes {start}-{end}/{len(content)}"
                    return self._send(206, content[start : end + 1], headers)
                return self._send(200, content, headers)

        return Handler
