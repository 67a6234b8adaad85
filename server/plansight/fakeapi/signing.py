"""Signatures of thinking blocks, as the real API checks them.

The real API signs each ``thinking`` block it returns and refuses a request whose thinking
block differs in any way from what it sent (``Invalid `signature` in `thinking` block``);
``redacted_thinking`` carries an opaque ``data`` that must come back unchanged. The fake signs
with one fixed key, so a conversation stored while talking to one fake instance still
verifies against a later one (as real signatures do not expire).
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac

__all__ = ["redacted_data", "sign_thinking", "valid_redacted_data", "valid_signature"]

_KEY = b"plansight-fakeapi-thinking-v1"
_SIGNATURE_TAG = b"fk1"
_REDACTED_TAG = b"fr1"


def _mac(kind: bytes, payload: bytes) -> bytes:
    return hmac.new(_KEY, kind + payload, hashlib.sha256).digest()


def sign_thinking(thinking: str) -> str:
    """The signature the fake gives a thinking block with this text."""
    return base64.b64encode(_SIGNATURE_TAG + _mac(b"t", thinking.encode())).decode()


def valid_signature(thinking: str, signature: str) -> bool:
    return hmac.compare_digest(sign_thinking(thinking), signature)


def redacted_data(hidden: str) -> str:
    """Opaque ``data`` of a redacted_thinking block hiding ``hidden``."""
    payload = hidden.encode()
    return base64.b64encode(_REDACTED_TAG + _mac(b"r", payload) + payload).decode()


def valid_redacted_data(data: str) -> bool:
    try:
        raw = base64.b64decode(data.encode(), validate=True)
    except (binascii.Error, ValueError):
        return False
    tag, mac, payload = raw[:3], raw[3:35], raw[35:]
    return tag == _REDACTED_TAG and hmac.compare_digest(mac, _mac(b"r", payload))
