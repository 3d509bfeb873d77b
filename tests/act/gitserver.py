"""Git's smart HTTP protocol on 127.0.0.1, for actions/checkout and benchbot's own fetch.

``GitServer`` serves every bare repository under ``root`` as ``/<owner>/<repo>`` (with or
without ``.git``), as github.com does, by running ``git http-backend`` as a CGI program
for each request. It records the credentials each request carried, so a test can tell
which token reached git.
"""

from __future__ import annotations

import base64
import subprocess
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any


class GitServer:
    """Serves the bare repositories under ``root`` over HTTP until ``stop()``."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.url = ""
        self.tokens: list[str] = []  # the password of each authenticated request
        self.lock = threading.Lock()
        self._httpd: ThreadingHTTPServer | None = None

    def start(self) -> GitServer:
        handler = type("_BoundGitHandler", (_GitHandler,), {"server_state": self})
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self._httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self._httpd.server_address[1]}"
        threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05},
                         name="GitServer", daemon=True).start()
        return self

    def stop(self) -> None:
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
            self._httpd = None

    def __enter__(self) -> GitServer:
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.stop()


def _password(authorization: str | None) -> str | None:
    """The password of a Basic authorization header (actions/checkout sends the token so)."""
    if not authorization or not authorization.lower().startswith("basic "):
        return None
    decoded = base64.b64decode(authorization.split(None, 1)[1]).decode(errors="replace")
    return decoded.partition(":")[2]


class _GitHandler(BaseHTTPRequestHandler):
    server_state: GitServer
    protocol_version = "HTTP/1.0"

    def do_GET(self) -> None:
        self._cgi()

    def do_POST(self) -> None:
        self._cgi()

    def _cgi(self) -> None:
        token = _password(self.headers.get("Authorization"))
        if token is not None:
            with self.server_state.lock:
                self.server_state.tokens.append(token)
        path, _, query = self.path.partition("?")
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else self._read_chunked()
        env = {
            "GIT_PROJECT_ROOT": str(self.server_state.root), "GIT_HTTP_EXPORT_ALL": "1",
            "PATH_INFO": _repository_path(path), "QUERY_STRING": query,
            "REQUEST_METHOD": self.command, "CONTENT_TYPE": self.headers.get("Content-Type", ""),
            "CONTENT_LENGTH": str(len(body)), "REMOTE_ADDR": "127.0.0.1",
            "HTTP_CONTENT_ENCODING": self.headers.get("Content-Encoding", ""),
            "GIT_PROTOCOL": self.headers.get("Git-Protocol", ""), "PATH": "/usr/bin:/bin",
        }
        proc = subprocess.run(["git", "http-backend"], input=body, env=env,
                              capture_output=True, check=False)
        self._answer(proc.stdout)

    def _read_chunked(self) -> bytes:
        if self.headers.get("Transfer-Encoding", "").lower() != "chunked":
            return b""
        out = bytearray()
        while True:
            size = int(self.rfile.readline().strip().split(b";")[0], 16)
            if size == 0:
                self.rfile.readline()
                return bytes(out)
            out += self.rfile.read(size)
            self.rfile.readline()

    def _answer(self, cgi_output: bytes) -> None:
        head, _, body = cgi_output.partition(b"\r\n\r\n")
        if not _:
            head, _, body = cgi_output.partition(b"\n\n")
        headers = [line.split(":", 1) for line in head.decode().splitlines() if ":" in line]
        status = next((v.strip() for k, v in headers if k.lower() == "status"), "200 OK")
        self.send_response(int(status.split()[0]))
        for key, value in headers:
            if key.lower() != "status":
                self.send_header(key, value.strip())
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:  # quiet
        pass


def _repository_path(path: str) -> str:
    """``/owner/repo/info/refs`` → ``/owner/repo.git/info/refs`` (bare repositories are
    stored with the suffix)."""
    parts = path.split("/")
    if len(parts) > 2 and not parts[2].endswith(".git"):
        parts[2] += ".git"
    return "/".join(parts)
