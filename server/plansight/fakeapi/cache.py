"""Prompt-cache simulation: the usage numbers the real API would report.

Model of the real behaviour (simplified, deterministic):

* The prompt is a sequence of blocks in the canonical order tools → system → messages
  (each tool definition, each system text block, each message content block; string
  content counts as one text block).
* Each block costs ``ceil(len(canonical JSON of the block) / 4)`` tokens, the JSON taken
  with sorted keys, compact separators, non-ASCII kept, and ``cache_control`` removed.
* Breakpoints are the blocks carrying ``cache_control`` (a top-level ``cache_control``
  marks the last block). The prefix ending at a block is identified by a hash chain over
  the model name and every block up to there (role included, ``cache_control`` excluded).
  Message blocks also depend on ``tool_choice`` and ``thinking``: as the real API documents,
  changing either invalidates the cached message blocks, while tools and system stay cached.
* Lookup: for each breakpoint, the prefix ending there and then those ending up to 20
  blocks earlier are checked, in that order, against the prefixes written before; the
  longest hit over all breakpoints is read (``cache_read_input_tokens``).
* Write: every breakpoint prefix of at least ``min_tokens`` (1024) tokens is written.
  ``cache_creation_input_tokens`` = tokens from the hit point to the last breakpoint;
  ``input_tokens`` = tokens after the last breakpoint. If the last breakpoint's prefix is
  shorter than ``min_tokens``, nothing is cached and everything counts as input.
* No expiry: the cache lives as long as the server instance (``PromptCache``).
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

__all__ = [
    "LOOKBACK_BLOCKS",
    "MIN_CACHEABLE_TOKENS",
    "CacheUsage",
    "PromptAnalysis",
    "PromptBlock",
    "PromptCache",
    "canonical_json",
    "estimate_tokens",
    "prompt_blocks",
]

MIN_CACHEABLE_TOKENS = 1024
LOOKBACK_BLOCKS = 20


def _strip_cache_control(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _strip_cache_control(v) for k, v in value.items() if k != "cache_control"}
    if isinstance(value, list):
        return [_strip_cache_control(v) for v in value]
    return value


def canonical_json(block: Any) -> str:
    """The JSON text used for token estimates and prefix hashes (no cache_control)."""
    return json.dumps(
        _strip_cache_control(block), sort_keys=True, separators=(",", ":"), ensure_ascii=False
    )


def estimate_tokens(block: Any) -> int:
    """``ceil(len(canonical_json(block)) / 4)``, an image block counted as the API counts it
    (`image_tokens`) instead of its base64 text."""
    text = canonical_json(block)
    if '"type":"image"' not in text:
        return math.ceil(len(text) / 4)
    images: list[Any] = []
    text = canonical_json(_without_images(block, images))
    return math.ceil(len(text) / 4) + sum(image_tokens(source) for source in images)


def _without_images(value: Any, images: list[Any]) -> Any:
    if isinstance(value, list):
        return [_without_images(item, images) for item in value]
    if not isinstance(value, dict):
        return value
    if value.get("type") == "image" and isinstance(value.get("source"), dict):
        images.append(value["source"])
        return {k: v for k, v in value.items() if k != "source"}
    return {key: _without_images(item, images) for key, item in value.items()}


# The API's image cost (its vision documentation): an image is scaled down to fit 1568 px on
# its long edge and about 1.15 megapixels, then costs width × height / 750 tokens.
IMAGE_LONG_EDGE = 1568
IMAGE_MAX_PIXELS = 1_150_000
IMAGE_DEFAULT_TOKENS = 1_600  # an image whose size the fake does not read (not a PNG)


def image_tokens(source: Any) -> int:
    """What an image `source` costs: from a base64 PNG's own size (its IHDR chunk), else the
    most any image costs."""
    size = _png_size(source.get("data")) if isinstance(source, dict) else None
    if size is None:
        return IMAGE_DEFAULT_TOKENS
    width, height = size
    scale = min(1.0, IMAGE_LONG_EDGE / max(width, height))
    scale = min(scale, math.sqrt(IMAGE_MAX_PIXELS / (width * height)))
    return max(1, math.ceil(width * scale * height * scale / 750))


def _png_size(data: Any) -> tuple[int, int] | None:
    if not isinstance(data, str):
        return None
    try:
        head = base64.b64decode(data[:32], validate=True)
    except (ValueError, binascii.Error):
        return None
    if len(head) < 24 or head[:8] != b"\x89PNG\r\n\x1a\n" or head[12:16] != b"IHDR":
        return None
    width, height = int.from_bytes(head[16:20], "big"), int.from_bytes(head[20:24], "big")
    return (width, height) if width and height else None


@dataclass(frozen=True)
class PromptBlock:
    section: str  # "tools", "system", "user" or "assistant"
    block: Any
    breakpoint: bool

    @property
    def tokens(self) -> int:
        return estimate_tokens(self.block)


def _has_cc(block: Any) -> bool:
    return isinstance(block, Mapping) and block.get("cache_control") is not None


def prompt_blocks(body: Mapping[str, Any]) -> list[PromptBlock]:
    """The request's blocks in canonical order (tools → system → messages)."""
    out: list[PromptBlock] = []
    for tool in body.get("tools") or []:
        out.append(PromptBlock("tools", tool, _has_cc(tool)))
    system = body.get("system")
    if isinstance(system, str):
        if system:
            out.append(PromptBlock("system", {"type": "text", "text": system}, False))
    elif isinstance(system, list):
        for block in system:
            out.append(PromptBlock("system", block, _has_cc(block)))
    for message in body.get("messages") or []:
        role = str(message.get("role"))
        content = message.get("content")
        if isinstance(content, str):
            if content:
                out.append(PromptBlock(role, {"type": "text", "text": content}, False))
        elif isinstance(content, list):
            for block in content:
                nested = isinstance(block, Mapping) and any(
                    _has_cc(sub) for sub in block.get("content") or [] if isinstance(sub, Mapping)
                )
                out.append(PromptBlock(role, block, _has_cc(block) or nested))
    if body.get("cache_control") is not None and out:
        last = out[-1]
        out[-1] = PromptBlock(last.section, last.block, True)
    return out


@dataclass(frozen=True)
class CacheUsage:
    input_tokens: int
    cache_creation_input_tokens: int
    cache_read_input_tokens: int

    @property
    def total(self) -> int:
        return self.input_tokens + self.cache_creation_input_tokens + self.cache_read_input_tokens

    def as_dict(self) -> dict[str, int]:
        return {
            "input_tokens": self.input_tokens,
            "cache_creation_input_tokens": self.cache_creation_input_tokens,
            "cache_read_input_tokens": self.cache_read_input_tokens,
        }


class PromptCache:
    """Cache state of one fake server. Not thread-safe: used from the server's loop."""

    def __init__(
        self, min_tokens: int = MIN_CACHEABLE_TOKENS, lookback: int = LOOKBACK_BLOCKS
    ) -> None:
        self.min_tokens = min_tokens
        self.lookback = lookback
        self._written: set[str] = set()

    def __len__(self) -> int:
        return len(self._written)

    def clear(self) -> None:
        self._written.clear()

    def peek(self, body: Mapping[str, Any]) -> CacheUsage:
        """The usage this request would get, without writing anything."""
        return self.analyse(body).usage

    def process(self, body: Mapping[str, Any]) -> CacheUsage:
        """The usage for this request; writes its breakpoint prefixes to the cache."""
        return self.commit(self.analyse(body))

    def commit(self, analysis: PromptAnalysis) -> CacheUsage:
        """Write the breakpoint prefixes of an analysed request (it was answered)."""
        self._written.update(analysis.writes)
        return analysis.usage

    def analyse(self, body: Mapping[str, Any]) -> PromptAnalysis:
        """The request's size and cache usage; nothing is written until ``commit``."""
        blocks = prompt_blocks(body)
        hashes: list[str] = []
        cumulative: list[int] = []
        digest = hashlib.sha256(f"model:{body.get('model')}".encode()).hexdigest()
        running = 0
        in_messages = False
        for pb in blocks:
            if not in_messages and pb.section in ("user", "assistant"):
                in_messages = True
                digest = hashlib.sha256((digest + _message_context(body)).encode()).hexdigest()
            item = json.dumps([pb.section, canonical_json(pb.block)], ensure_ascii=False)
            digest = hashlib.sha256((digest + item).encode()).hexdigest()
            hashes.append(digest)
            running += pb.tokens
            cumulative.append(running)
        total = running
        breakpoints = [i for i, pb in enumerate(blocks) if pb.breakpoint]
        if not breakpoints or cumulative[breakpoints[-1]] < self.min_tokens:
            return PromptAnalysis(CacheUsage(total, 0, 0), ())
        hit = -1
        for bp in breakpoints:
            for j in range(bp, max(-1, bp - self.lookback - 1), -1):
                if hashes[j] in self._written:
                    hit = max(hit, j)
                    break
        last = breakpoints[-1]
        read = cumulative[hit] if hit >= 0 else 0
        writes = tuple(hashes[bp] for bp in breakpoints if cumulative[bp] >= self.min_tokens)
        usage = CacheUsage(
            input_tokens=total - cumulative[last],
            cache_creation_input_tokens=cumulative[last] - read,
            cache_read_input_tokens=read,
        )
        return PromptAnalysis(usage, writes)


def _message_context(body: Mapping[str, Any]) -> str:
    """What else the cached message blocks depend on (absent means the API's default)."""
    choice = body.get("tool_choice") or {"type": "auto"}
    thinking = body.get("thinking") or {"type": "disabled"}
    return "messages:" + canonical_json({"tool_choice": choice, "thinking": thinking})


@dataclass(frozen=True)
class PromptAnalysis:
    """A request measured against the cache: its usage, and the prefixes it would write."""

    usage: CacheUsage
    writes: tuple[str, ...]
