"""The JSON-RPC errors the agent answers, as every client can read them and the user can act on.

The acp SDK writes each error as `{"code", "message", "data": <data or null>}`: `data: null` for
every error raised without data, and CodeCompanion.nvim's error handler fails on a null member
(the chat then hangs). JSON-RPC makes `data` optional, so the transport writes each error object
through `wire_error` (stdio.py): members that are null are left out, for every error the SDK or
the agent makes. The SDK's own errors ("Invalid params", "Internal error", "Method not found")
carry the reason only in `data`, which many clients never show: their message gains it, and
what to do.

A run that ended on a model API error is answered as an error (ACP has no stop reason for it):
`run_error` says what the API's answer means for the user (a refused key: set
`ANTHROPIC_API_KEY`).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from acp import RequestError

INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603
METHOD_NOT_FOUND = -32601

_REFUSED_KEY = re.compile(r"\(HTTP 401\)|authentication_error")
_FORBIDDEN = re.compile(r"\(HTTP 403\)|permission_error")
_BUSY = re.compile(r"\(HTTP (429|529|503)\)|rate_limit_error|overloaded_error")
_UNREACHABLE = re.compile(r"Could not reach|connection failed", re.IGNORECASE)


def invalid_params(message: str) -> RequestError:
    return RequestError(INVALID_PARAMS, message)


def request_failed(message: str) -> RequestError:
    return RequestError(INTERNAL_ERROR, message)


def run_error(said: str) -> RequestError:
    """The error a run that failed answers, `said` the engine's words (the API's message)."""
    if _REFUSED_KEY.search(said):
        text = (
            "The API key was refused: set ANTHROPIC_API_KEY to a valid key in the environment "
            "your editor starts `plansight acp` with, then restart the agent."
        )
    elif _FORBIDDEN.search(said):
        text = (
            "The API key may not use this model: check the key's workspace and permissions, or "
            "choose another model (PLANSIGHT_MODEL, or `model` in config.json)."
        )
    elif _BUSY.search(said):
        text = "The model API is busy or rate-limited: wait a little and send the prompt again."
    elif _UNREACHABLE.search(said):
        text = (
            "Plansight could not reach the model API: check the network, and ANTHROPIC_BASE_URL "
            "if you set one, then send the prompt again."
        )
    else:
        return request_failed(said)
    return request_failed(f"{text} (The API said: {said})")


def wire_error(error: Mapping[str, Any]) -> dict[str, Any]:
    """An error object as it goes out: no null members, and a message that says why."""
    cleaned: dict[str, Any] = _without_nulls(error)
    message = str(cleaned.get("message") or "The request failed.")
    data = cleaned.get("data")
    code = cleaned.get("code")
    if message == "Invalid params" and isinstance(data, Mapping):
        problems = data.get("errors")
        if isinstance(problems, list) and problems:
            message = "Invalid params: " + "; ".join(_problem(p) for p in problems[:3])
    elif message == "Internal error" and isinstance(data, Mapping) and data.get("details"):
        message = (
            f"Plansight failed on this request ({data['details']}). Its log (stderr) has the "
            "details; send the request again, or restart the agent if it fails again."
        )
    elif code == METHOD_NOT_FOUND and isinstance(data, Mapping) and data.get("method"):
        message = (
            f"Method not found: {data['method']}. Plansight serves the Agent Client Protocol, "
            "version 1 (see its initialize answer for what it offers)."
        )
    cleaned["message"] = message
    if "code" not in cleaned:
        cleaned["code"] = INTERNAL_ERROR
    return cleaned


def _without_nulls(value: Any) -> Any:
    """`value` with every null member of its objects left out, at any depth."""
    if isinstance(value, Mapping):
        return {k: _without_nulls(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [_without_nulls(v) for v in value]
    return value


def _problem(problem: Any) -> str:
    if not isinstance(problem, Mapping):
        return str(problem)
    where = ".".join(str(part) for part in problem.get("loc") or ())
    said = str(problem.get("msg") or "invalid")
    return f"{where}: {said}" if where else said
