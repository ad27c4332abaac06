"""The delivery signature: `X-Memory-Signature: t=<unix seconds>,v1=<hex>`.

v1 is HMAC-SHA256 with the webhook's secret over `"<t>." + body`; a receiver
recomputes it and refuses a timestamp older than a few minutes (replays).
"""

import hashlib
import hmac
import time

HEADER = "X-Memory-Signature"
TOLERANCE_SECONDS = 300


def signature(secret: str, body: bytes, timestamp: int | None = None) -> str:
    timestamp = int(time.time()) if timestamp is None else timestamp
    digest = hmac.new(secret.encode(), f"{timestamp}.".encode() + body, hashlib.sha256)
    return f"t={timestamp},v1={digest.hexdigest()}"


def signature_valid(secret: str, header: str, body: bytes, *, now: float | None = None) -> bool:
    """What a receiver runs (and the tests do): right key, right body, recent."""
    parts = dict(part.split("=", 1) for part in header.split(",") if "=" in part)
    try:
        timestamp = int(parts["t"])
    except (KeyError, ValueError):
        return False
    now = time.time() if now is None else now
    if abs(now - timestamp) > TOLERANCE_SECONDS:
        return False
    expected = signature(secret, body, timestamp)
    return hmac.compare_digest(expected, header.strip())
