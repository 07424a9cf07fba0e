"""Standard Webhooks verification (https://www.standardwebhooks.com), standard library only.

The obv-link proxy signs each merchant event: `webhook-signature` holds `v1,<base64 HMAC-SHA256>` of
`{webhook-id}.{webhook-timestamp}.{body}`, keyed with the base64 after `whsec_` (one `v1,…` per secret
while the proxy rotates them, separated by spaces).
"""
import base64
import hashlib
import hmac
import time

TOLERANCE_SECONDS = 5 * 60  # a replayed or long-delayed delivery is refused


class InvalidSignature(Exception):
    pass


def verify(secrets: list[str], headers, body: bytes, now: float | None = None) -> None:
    """Raises InvalidSignature unless `body` (the raw bytes) was signed recently with one of `secrets` (whsec_…)."""
    msg_id, timestamp, signatures = (headers.get(name) for name in ("webhook-id", "webhook-timestamp", "webhook-signature"))
    if not (msg_id and timestamp and signatures):
        raise InvalidSignature("missing webhook-id, webhook-timestamp or webhook-signature")
    try:
        sent_at = int(timestamp)
    except ValueError:
        raise InvalidSignature("webhook-timestamp is not a number") from None
    if abs((time.time() if now is None else now) - sent_at) > TOLERANCE_SECONDS:
        raise InvalidSignature("webhook-timestamp is outside the tolerance")
    signed = f"{msg_id}.{timestamp}.".encode() + body
    for secret in secrets:
        key = base64.b64decode(secret.removeprefix("whsec_"))
        expected = base64.b64encode(hmac.new(key, signed, hashlib.sha256).digest())
        for candidate in signatures.split():
            version, _, signature = candidate.partition(",")
            if version == "v1" and hmac.compare_digest(signature.encode(), expected):  # constant time
                return
    raise InvalidSignature("no signature matches")
