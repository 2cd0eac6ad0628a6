"""A misbehaving OpenAI-compatible ``/v1/completions`` server on 127.0.0.1 (a test double).

Raw sockets, not ``http.server``: some faults live below HTTP (a connection reset mid-answer, an
answer trickled a byte at a time). The fault is the first path segment (``base_url`` =
``http://127.0.0.1:PORT/<mode>/v1``), or, for ``helm-run``, chosen per prompt through
:attr:`FaultServer.by_prompt`. Healthy answers are built from the prompt itself (one token per
word, logprob -1 - index/10), so any suite can be served. Every loop is bounded and the server
stops with :meth:`FaultServer.close`; its threads are daemons.
"""

from __future__ import annotations

import json
import re
import socket
import socketserver
import struct
import threading
import time
from typing import Any

HTML = (b"<!DOCTYPE html><html><head><title>Log in - Open WebUI</title></head>"
        b"<body><form action='/login'></form></body></html>")

# mode -> what the client must say (a piece of the request's error); None: it must succeed.
FAULTS: dict[str, str | None] = {
    "healthy": None,
    "positive": "has logprob 0.7, above 0: a probability of 2.01",
    "boolean": "has logprob true (a JSON boolean, not a number)",
    "string": 'has logprob "-1.5" (a JSON string, not a number)',
    "html": "came back with text/html; charset=utf-8, ",
    "html404": "answered HTTP 404: not JSON: text/html; charset=utf-8, 117 bytes, beginning",
    "truncated": "its JSON is malformed or cut off",
    "reset": "broke before a complete answer",
    "status429": "answered HTTP 429",
    "token_count": "tokens but",
    "usage_count": "spell the prompt",
    "huge_no_usage": "but no usage.prompt_tokens",
    "nan": "has logprob nan",
    "misspelled": "its tokens do not spell the prompt",
    "lowercased": "its tokens spell the prompt only if case is ignored",
    "trickle_body": "(timeout: the whole request",
    "trickle_headers": "(timeout: the whole request",
}


def words(prompt: str) -> list[str]:
    """The fake tokenizer: each word with the whitespace before it."""
    return re.findall(r"\s*\S+", prompt)


def healthy_logprobs(prompt: str) -> list[float | None]:
    return [None] + [-1.0 - i / 10 for i in range(1, len(words(prompt)))]


def echo(prompt: str, *, extra: str = "", usage: bool = True) -> dict[str, Any]:
    """A correct echo answer (OpenAI's layout), with ``extra`` generated text after the prompt."""
    tokens = words(prompt) + words(extra)
    logprobs = healthy_logprobs(prompt) + [-3.0] * len(words(extra))
    answer: dict[str, Any] = {
        "id": "cmpl-fault", "object": "text_completion", "created": 0, "model": "fault",
        "choices": [{"index": 0, "text": prompt + extra, "finish_reason": "length",
                     "logprobs": {"tokens": tokens, "token_logprobs": logprobs,
                                  "text_offset": [], "top_logprobs": None}}]}
    if usage:
        answer["usage"] = {"prompt_tokens": len(words(prompt)),
                           "completion_tokens": len(words(extra)),
                           "total_tokens": len(tokens)}
    return answer


def _with_logprob(prompt: str, value: Any) -> dict[str, Any]:
    answer = echo(prompt)
    answer["choices"][0]["logprobs"]["token_logprobs"][1] = value
    return answer


class FaultServer:
    """The server; ``url(mode)`` is a deployment's ``base_url``; ``requests`` counts per mode."""

    def __init__(self, trickle_interval: float = 0.2, trickle_limit: float = 60.0,
                 keep_alive: bool = False) -> None:
        self.trickle_interval = trickle_interval
        # keep_alive: answer HTTP/1.1 keep-alive (up to 100 requests a connection), not "close".
        self.keep_alive = keep_alive
        self.connections = 0
        self.trickle_limit = trickle_limit  # no trickle outlives this, even if nobody reads it
        self.by_prompt: dict[str, str] = {}
        self.requests: dict[str, int] = {}
        self._seen: set[tuple[str, str]] = set()
        self._lock = threading.Lock()
        self._closed = threading.Event()
        server = self

        class Handler(socketserver.BaseRequestHandler):
            def handle(self) -> None:
                self.request.settimeout(10)
                with server._lock:
                    server.connections += 1
                try:
                    for _ in range(100 if server.keep_alive else 1):
                        if not server._handle(self.request):
                            break
                except OSError:
                    pass  # the client went away (cut off by its deadline): expected

        self._server = socketserver.ThreadingTCPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self.port = self._server.server_address[1]
        self._thread = threading.Thread(target=self._server.serve_forever,
                                        kwargs={"poll_interval": 0.05}, daemon=True)
        self._thread.start()

    def url(self, mode: str = "healthy") -> str:
        return f"http://127.0.0.1:{self.port}/{mode}/v1"

    def close(self) -> None:
        self._closed.set()
        self._server.shutdown()
        self._server.server_close()

    # -- one connection ---------------------------------------------------------------------------

    def _handle(self, sock: socket.socket) -> bool:
        """Answers one request; False when the client closed the connection first."""
        head = b""
        while b"\r\n\r\n" not in head and len(head) < 65536:
            chunk = sock.recv(1)  # byte by byte: never read into the next request
            if not chunk:
                return False
            head += chunk
        header_bytes, _, body = head.partition(b"\r\n\r\n")
        lines = header_bytes.decode("latin-1").split("\r\n")
        path = lines[0].split(" ")[1]
        headers = {
            k.strip().lower(): v.strip() for k, _, v in (ln.partition(":") for ln in lines[1:])
        }
        length = int(headers.get("content-length", "0"))
        while len(body) < length:
            chunk = sock.recv(length - len(body))
            if not chunk:
                return False
            body += chunk
        prompt = str(json.loads(body or b"{}").get("prompt", ""))
        mode = self.by_prompt.get(prompt) or path.strip("/").split("/")[0]
        with self._lock:
            self.requests[mode] = self.requests.get(mode, 0) + 1
            first = (mode, prompt) not in self._seen
            self._seen.add((mode, prompt))
        self._answer(sock, mode, prompt, first)
        return True

    def _answer(self, sock: socket.socket, mode: str, prompt: str, first: bool) -> None:
        if mode == "healthy" or (mode == "status500_once" and not first):
            self._send(sock, 200, echo(prompt))
        elif mode == "status500_once":
            self._send(sock, 500, {"error": {"message": "model is loading"}})
        elif mode == "status429":
            self._send(sock, 429, {"error": {"message": "Too many requests"}})
        elif mode in ("positive", "boolean", "string", "nan"):
            value = {"positive": 0.7, "boolean": True, "string": "-1.5", "nan": float("nan")}[mode]
            self._send(sock, 200, _with_logprob(prompt, value))  # NaN: Python's JSON extension
        elif mode in ("misspelled", "lowercased"):
            answer = echo(prompt)  # the text echoes the prompt; the tokens scored another one
            tokens = answer["choices"][0]["logprobs"]["tokens"]
            tokens[-1] = tokens[-1].lower() if mode == "lowercased" else " elsewhere"
            if mode == "lowercased":
                tokens[0] = tokens[0].lower()
            self._send(sock, 200, answer)
        elif mode == "html":
            self._raw(sock, 200, HTML, "text/html; charset=utf-8")
        elif mode == "html404":  # a base_url without /v1 on a web UI's host
            self._raw(sock, 404, HTML, "text/html; charset=utf-8")
        elif mode == "truncated":
            data = json.dumps(echo(prompt)).encode()
            self._raw(sock, 200, data[: len(data) // 2], "application/json")
        elif mode == "reset":
            data = json.dumps(echo(prompt)).encode()
            sock.sendall(self._head(200, len(data), "application/json") + data[: len(data) // 2])
            # SO_LINGER 0: close() sends a TCP reset instead of an orderly end.
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            sock.close()
        elif mode == "token_count":
            answer = echo(prompt)
            answer["choices"][0]["logprobs"]["tokens"].append(" extra")
            self._send(sock, 200, answer)
        elif mode == "usage_count":
            answer = echo(prompt, extra=" and so on")
            answer["usage"]["prompt_tokens"] += 2
            self._send(sock, 200, answer)
        elif mode in ("huge", "huge_no_usage"):
            self._send(sock, 200, echo(prompt, extra=" more" * 20000, usage=mode == "huge"))
        elif mode == "trickle_body":
            data = json.dumps(echo(prompt)).encode()
            sock.sendall(self._head(200, len(data), "application/json"))
            self._trickle(sock, data)
        elif mode == "trickle_headers":
            data = json.dumps(echo(prompt)).encode()
            self._trickle(sock, self._head(200, len(data), "application/json") + data)
        else:
            self._send(sock, 404, {"error": {"message": f"no fault mode {mode!r}"}})

    def _trickle(self, sock: socket.socket, data: bytes) -> None:
        stop = time.monotonic() + self.trickle_limit
        for byte in data:
            if self._closed.is_set() or time.monotonic() > stop:
                return
            sock.sendall(bytes([byte]))
            time.sleep(self.trickle_interval)

    def _head(self, status: int, length: int, content_type: str) -> bytes:
        close = "" if self.keep_alive else "Connection: close\r\n"
        return (f"HTTP/1.1 {status} X\r\nContent-Type: {content_type}\r\n"
                f"Content-Length: {length}\r\n{close}\r\n").encode()

    def _raw(self, sock: socket.socket, status: int, data: bytes, content_type: str) -> None:
        sock.sendall(self._head(status, len(data), content_type) + data)

    def _send(self, sock: socket.socket, status: int, body: Any) -> None:
        self._raw(sock, status, json.dumps(body).encode(), "application/json")
