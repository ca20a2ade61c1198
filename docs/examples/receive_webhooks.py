"""A receiver of the service's webhooks, on Python 3's standard library alone:

    WEBHOOK_SECRET=whsec_... python3 docs/examples/receive_webhooks.py 8080

It listens on the port of its argument (or PORT) and takes each POST as a delivery: it verifies the
Standard Webhooks signature (the HMAC-SHA256 of "id.timestamp.body" under the subscription's secret,
a timestamp within 5 minutes of its clock), refuses a delivery that fails with 401, answers a
delivery it received before (the same webhook-id) 204 without handling it again, and answers any
other 204 at once, before handling it (here: printing its body on stdout, one line a delivery). What
it says about itself goes to stderr. docs/webhooks.md explains each choice; receive-webhooks.mjs and
ReceiveWebhooks.cs beside it do the same in Node.js and C#.

    WEBHOOK_SECRET  the secret CreateWebhook (or RotateWebhookSecret) answered, whsec_...
"""

import base64
import hashlib
import hmac
import os
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

TOLERANCE_SECONDS = 5 * 60
# More than any event the service sends; a larger body is refused unread.
MAX_BODY_BYTES = 1024 * 1024


class VerificationError(Exception):
    pass


def secret_key(secret):
    """The HMAC key: the base64 after "whsec_"."""
    return base64.b64decode(secret[len("whsec_"):] if secret.startswith("whsec_") else secret)


def verify(key, webhook_id, timestamp, signatures, body, now=None):
    """Raises VerificationError unless one v1 signature of the header signs this delivery.

    body is the request's bytes exactly as received: the signature covers them, not a parse of them.
    """
    if not webhook_id or not timestamp or not signatures:
        raise VerificationError("missing required headers")
    try:
        sent = int(timestamp)
    except ValueError:
        raise VerificationError("invalid timestamp") from None
    now = int(time.time()) if now is None else now
    # A stale delivery may be a replay of one captured earlier: refuse it either way off the clock.
    if abs(now - sent) > TOLERANCE_SECONDS:
        raise VerificationError("timestamp too old" if sent < now else "timestamp too new")
    signed = f"{webhook_id}.{timestamp}.".encode() + body
    expected = base64.b64encode(hmac.new(key, signed, hashlib.sha256).digest())
    # During a rotation the header carries two signatures, one per secret: any one may match.
    for versioned in signatures.split(" "):
        version, _, signature = versioned.partition(",")
        if version == "v1" and hmac.compare_digest(signature.encode(), expected):
            return
    raise VerificationError("no matching signature")


def log(message):
    print(f"[receive_webhooks] {message}", file=sys.stderr, flush=True)


def handle(body):
    """The work a delivery asks for, done after its answer: the service waits for the answer (10 s at
    most), so a receiver stores the delivery, answers, and works from what it stored."""
    sys.stdout.write(body.decode("utf-8") + "\n")
    sys.stdout.flush()


class Receiver(BaseHTTPRequestHandler):
    key = b""
    # The webhook-ids of the deliveries received. A real receiver keeps them in its own database,
    # written in the transaction that stores the delivery for its work, and keeps them for days.
    received = set()
    lock = threading.Lock()

    def do_POST(self):
        try:
            length = int(self.headers.get("Content-Length", "0"))
        except ValueError:
            length = -1
        if length < 0 or length > MAX_BODY_BYTES:
            self.send_response(413)
            self.send_header("Connection", "close")
            self.end_headers()
            return
        body = self.rfile.read(length)
        webhook_id = self.headers.get("webhook-id", "")
        try:
            verify(
                self.key,
                webhook_id,
                self.headers.get("webhook-timestamp", ""),
                self.headers.get("webhook-signature", ""),
                body,
            )
        except VerificationError as error:
            log(f"Refused delivery {webhook_id}: {error}")
            self.answer(401)
            return
        with self.lock:
            duplicate = webhook_id in self.received
            self.received.add(webhook_id)
        if duplicate:
            log(f"Skipped delivery {webhook_id}: already received")
            self.answer(204)
            return
        self.answer(204)
        handle(body)

    def answer(self, status):
        self.send_response(status)
        self.end_headers()
        self.wfile.flush()

    def log_message(self, format, *args):
        pass  # one line per refusal or skip, above, rather than one per request


def main():
    port = sys.argv[1] if len(sys.argv) > 1 else os.environ.get("PORT", "")
    secret = os.environ.get("WEBHOOK_SECRET", "")
    if not port.isdigit() or not secret:
        log("Usage: WEBHOOK_SECRET=whsec_... python3 docs/examples/receive_webhooks.py <port>")
        sys.exit(2)
    Receiver.key = secret_key(secret)
    server = ThreadingHTTPServer(("", int(port)), Receiver)
    log(f"Listening on port {port}")
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    server.server_close()
    log("Stopped.")


if __name__ == "__main__":
    main()
