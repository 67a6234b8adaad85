"""What the fake's Models API (``GET /v1/models/{id}``) answers: ModelInfo JSON as the real
API shapes it (every capability key present), so ``client.models.retrieve(id)`` parses it.
"""

from __future__ import annotations

from typing import Any

__all__ = ["model_info"]


def _support(value: bool) -> dict[str, bool]:
    return {"supported": value}


def model_info(
    model_id: str,
    *,
    max_input_tokens: int | None = 200_000,
    max_tokens: int | None = 64_000,
    adaptive: bool = False,
    enabled: bool = True,
    context_management: bool = True,
    display_name: str | None = None,
) -> dict[str, Any]:
    """A ModelInfo for ``model_id``.

    ``adaptive`` / ``enabled``: which ``thinking.type`` values the model accepts (the Claude 4.6
    models take both, Claude 5 and Opus 4.7 only ``adaptive``, 4.5 and older only ``enabled``).
    The fake's request validation follows what this says.
    """
    thinking = adaptive or enabled
    return {
        "type": "model",
        "id": model_id,
        "display_name": display_name or model_id,
        "created_at": "2026-01-01T00:00:00Z",
        "lifecycle": "active",
        "deprecated_at": None,
        "retires_at": None,
        "line": None,
        "max_input_tokens": max_input_tokens,
        "max_tokens": max_tokens,
        "capabilities": {
            "batch": _support(True),
            "citations": _support(True),
            "code_execution": _support(False),
            "context_management": {
                "supported": context_management,
                "clear_tool_uses_20250919": _support(context_management),
                "clear_thinking_20251015": _support(context_management),
                "compact_20260112": _support(context_management and adaptive),
            },
            "effort": {
                "supported": adaptive,
                "low": _support(adaptive),
                "medium": _support(adaptive),
                "high": _support(adaptive),
                "max": _support(adaptive),
            },
            "image_input": _support(True),
            "pdf_input": _support(True),
            "server_tools": {
                "supported": False,
                "code_execution": _support(False),
                "web_search": _support(False),
            },
            "structured_outputs": _support(True),
            "thinking": {
                "supported": thinking,
                "types": {
                    "adaptive": _support(adaptive),
                    "enabled": _support(enabled),
                    "disabled": _support(True),
                    "between_tools": _support(False),
                },
            },
        },
    }
