"""The one error a tool handler raises on purpose: its message is written for the model."""

from __future__ import annotations


class ToolError(Exception):
    """An expected failure: its message goes back to the model as an is_error result."""
