"""An MCP tool result (the SDK's `CallToolResult`) as a Messages API tool_result's content.

Text content is joined; images become image blocks (base64, the four media types the API
takes, at most 5 MB; any other is named in the text instead); structured content is added as
JSON text unless the text already says the same (servers are asked to send both); audio,
resources and links are named in words. The whole is cut at 100 kB of text with a note, as
`read_file` is.
"""

from __future__ import annotations

import json
from typing import Any

from plansight.engine.conversation import Block, text_block

RESULT_MAX_BYTES = 100_000
IMAGE_TYPES = frozenset({"image/jpeg", "image/png", "image/gif", "image/webp"})
IMAGE_MAX_BYTES = 5_000_000  # the Messages API refuses a bigger image (the whole request fails)
NO_OUTPUT = "(the tool returned no output)"


def result_content(result: Any) -> str | list[Block]:
    """The tool_result content: a plain string when the result is text only."""
    texts: list[str] = []
    images: list[Block] = []
    for item in result.content or []:
        kind = getattr(item, "type", None)
        if kind == "text":
            texts.append(item.text)
        elif kind == "image" and len(item.data) * 3 // 4 > IMAGE_MAX_BYTES:
            texts.append(
                f"[an image of {len(item.data) * 3 // 4 // 1_000_000} MB was left out: the API "
                f"takes images of at most {IMAGE_MAX_BYTES // 1_000_000} MB]"
            )
        elif kind == "image" and item.mime_type in IMAGE_TYPES:
            images.append(
                {
                    "type": "image",
                    "source": {"type": "base64", "media_type": item.mime_type, "data": item.data},
                }
            )
        elif kind == "image":
            texts.append(f"[an image of type {item.mime_type} was left out: not supported]")
        elif kind == "audio":
            texts.append(f"[audio of type {item.mime_type} was left out: not supported]")
        elif kind == "resource":
            texts.append(_resource_text(item.resource))
        elif kind == "resource_link":
            texts.append(
                f"[resource link: {item.uri}" + (f" ({item.name})" if item.name else "") + "]"
            )
        else:
            texts.append(f"[content of type {kind} was left out: not supported]")
    structured = getattr(result, "structured_content", None)
    if structured is not None and not _said(structured, texts):
        texts.append(json.dumps(structured, ensure_ascii=False, indent=1))
    text = cut("\n".join(texts))
    if not images:
        return text or NO_OUTPUT
    return [*([text_block(text)] if text.strip() else []), *images]


def _resource_text(resource: Any) -> str:
    text = getattr(resource, "text", None)
    if isinstance(text, str):
        return f"[resource {resource.uri}]\n{text}"
    mime = getattr(resource, "mime_type", None) or "binary"
    return f"[resource {resource.uri} ({mime}) was left out: not text]"


def _said(structured: Any, texts: list[str]) -> bool:
    """Whether the text content already carries the structured content: as its JSON, or (the
    SDK's wrapping of a function's plain return value) as `{"result": text}`."""
    joined = "\n".join(texts)
    if isinstance(structured, dict) and set(structured) == {"result"}:
        inner = structured["result"]
        if isinstance(inner, str) and inner == joined:
            return True
    for text in (*texts, joined):
        try:
            if json.loads(text) == structured:
                return True
        except ValueError:
            continue
    return False


def cut(text: str) -> str:
    """`text` cut at RESULT_MAX_BYTES of UTF-8, with a note saying how much was left out."""
    data = text.encode("utf-8")
    if len(data) <= RESULT_MAX_BYTES:
        return text
    kept = data[:RESULT_MAX_BYTES].decode("utf-8", errors="ignore")
    return (
        f"{kept}\n[output cut at {RESULT_MAX_BYTES // 1000} kB: {len(data) - len(kept.encode())} "
        f"of {len(data)} bytes left out (output size limit)]"
    )
