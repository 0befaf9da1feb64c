"""A webhook receiver written only with Python's standard library: an implementation of the signing rule that is
independent of the service's TypeScript code (the anchor's rule; spec 002 section G).

  key       = base64.urlsafe_b64decode(secret)
  signature = base64.urlsafe_b64encode(hmac_sha256(key, f"{ts}.{raw_body}"))   (padded)
  compared in constant time; rejected when X-Timestamp is not an integer or |now - ts| > 300.

The payload's webhook_id selects the secret (for `stringified_json` the event is inside `{"text": "..."}`).

Control API (JSON): POST /_control/secrets {webhook_id: secret}; POST /_control/behavior {path, status,
retry_after?, delay_ms?}; GET /_control/received; POST /_control/reset. Any other POST is a delivery.
Prints the listening port on the first line of stdout.
"""
import base64
import hashlib
import hmac
import json
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

WINDOW_SECONDS = 300
lock = threading.Lock()
secrets = {}
behaviors = {}
received = []


def verify(headers, raw_body):
    ts = headers.get("X-Timestamp", "")
    sig = headers.get("X-Signature", "")
    try:
        ts_int = int(ts)
    except ValueError:
        return False, "timestamp not an integer", None
    if abs(time.time() - ts_int) > WINDOW_SECONDS:
        return False, "timestamp outside the 300 s window", None
    try:
        payload = json.loads(raw_body)
        if isinstance(payload, dict) and set(payload.keys()) == {"text"}:
            payload = json.loads(payload["text"])
    except ValueError:
        return False, "body is not JSON", None
    secret = secrets.get(payload.get("webhook_id"))
    if secret is None:
        return False, "unknown webhook_id", payload
    key = base64.urlsafe_b64decode(secret)
    expected = base64.urlsafe_b64encode(
        hmac.new(key, f"{ts}.".encode() + raw_body, hashlib.sha256).digest()
    ).decode()
    if not hmac.compare_digest(expected, sig):
        return False, "bad signature", payload
    return True, None, payload


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def _send(self, status, body=b"", headers=None):
        try:
            self.send_response(status)
            for k, v in (headers or {}).items():
                self.send_header(k, v)
            self.send_header("Content-Length", str(len(body)))
            self.send_header("Content-Type", "application/json")
            self.end_headers()
            self.wfile.write(body)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the sender gave up (timeout test)

    def _body(self):
        length = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(length) if length else b""

    def do_GET(self):
        if self.path == "/_control/received":
            with lock:
                out = json.dumps(received).encode()
            return self._send(200, out)
        return self._send(404)

    def do_POST(self):
        raw = self._body()
        if self.path == "/_control/secrets":
            with lock:
                secrets.update(json.loads(raw))
            return self._send(204)
        if self.path == "/_control/behavior":
            b = json.loads(raw)
            with lock:
                behaviors[b["path"]] = b
            return self._send(204)
        if self.path == "/_control/reset":
            with lock:
                received.clear()
                behaviors.clear()
            return self._send(204)
        ok, reason, payload = verify(self.headers, raw)
        with lock:
            behavior = behaviors.get(self.path)
        status = 200 if ok else 401
        extra = {}
        if behavior and behavior.get("delay_ms"):
            time.sleep(behavior["delay_ms"] / 1000)
        if ok and behavior:
            status = behavior["status"]
            if behavior.get("retry_after") is not None:
                extra["Retry-After"] = str(behavior["retry_after"])
        entry = {
            "path": self.path,
            "verified": ok,
            "reason": reason,
            "status_returned": status,
            "content_type": self.headers.get("Content-Type"),
            "timestamp": self.headers.get("X-Timestamp"),
            "signature": self.headers.get("X-Signature"),
            "headers": {k.lower(): v for k, v in self.headers.items()},
            "raw_body": raw.decode("utf-8", "replace"),
            "payload": payload,
            "received_at_ms": int(time.time() * 1000),
        }
        with lock:
            received.append(entry)
        return self._send(status, b"{}", extra)


def main():
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    print(server.server_address[1], flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
