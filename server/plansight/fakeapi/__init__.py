"""A scripted fake of the Anthropic Messages API: a real HTTP/1.1 server on 127.0.0.1.

Point the official ``anthropic`` SDK at it (``base_url=api.base_url`` or
``ANTHROPIC_BASE_URL``, any API key) and it answers each ``POST /v1/messages`` (also
``?beta=true``) with the next step of a script, streamed as SSE when ``"stream": true`` and
as a full Message JSON otherwise. Requests are validated with the real API's rules first
(400 ``invalid_request_error``), the API key header is required (401), and usage numbers come
from a prompt-cache simulation (``plansight.fakeapi.cache``). Rejected requests do not consume
a step; when the script is exhausted every further request gets
400 "fake API: script exhausted after N requests".

It behaves as the real API does where clients trip (each is tested in tests/test_fakeapi_*.py):
a request over ``context_window`` input tokens gets the real 400 ``prompt is too long: N tokens
> W maximum``; empty and whitespace-only text blocks, trailing whitespace at the end of a final
assistant message, and the thinking rules (budget >= 1024 and < max_tokens, signatures that
must come back unchanged, the last tool loop's assistant turn starting with its thinking, no
forced tool_choice with thinking), and a ``max_tokens`` above the output limit of a model the
fake knows, are refused with the real messages; thinking blocks are
signed (``sign_thinking``) and, with ``thinking: enabled``, every reply starts with one;
``stop_reason: "max_tokens"`` after a tool_use cuts that call's JSON as the real stream does;
a refusal carries ``stop_details``; ``GET /v1/models/{id}`` serves the ``models`` given
(``model_info(...)``), and answers 404 without them. A scripted reply the real model could
not give (a tool call under ``tool_choice: none``, thinking the request did not turn on) is a
script mistake, answered 500 ``fake API: ...``.

In Python::

    from plansight.fakeapi import FakeMessagesAPI, HttpError, text_reply, tool_reply

    with FakeMessagesAPI([tool_reply("read_file", {"path": "a.py"}), text_reply("Done.")]) as api:
        client = anthropic.AsyncAnthropic(base_url=api.base_url, api_key="test")
        ...
        assert api.requests[1].body["messages"][-1]["content"][0]["type"] == "tool_result"

Standalone (the VS Code end-to-end test, ``plansight demo``)::

    python -m plansight.fakeapi --script recording.json [--port 0] [--latency-ms N]
        [--context-window TOKENS]

prints one line ``{"baseUrl": "http://127.0.0.1:PORT"}`` on stdout once listening, logs to
stderr and runs until SIGTERM/SIGINT. ``GET /_fake/requests`` returns the recorded requests
as a JSON list (``method``, ``path``, ``headers`` with API keys redacted, ``body``, ``status``,
``error``, ``stepIndex``, ``outcome``, ``usage``, and perf_counter times ``arrivedAt``,
``receivedAt``, ``firstByteAt``, ``finishedAt``).

Recording format (``Script.from_json(path)`` / ``Script.from_dict(data)``)::

    {"steps": [
      // a reply: response content blocks; a real Message JSON works as is
      {"content": [{"type": "text", "text": "Let me look."},
                   {"type": "tool_use", "name": "read_file", "input": {"path": "a.py"}}],
       "stop_reason": "tool_use",      // optional: default tool_use if a tool_use block,
                                       //           else end_turn
       "usage": {"output_tokens": 12}, // optional: overrides computed usage numbers
       "stop_details": {...},          // optional: sent with the stop reason (refusal)
       "chunk_delay_ms": 5},           // optional: pause before each streamed delta
      {"text": "Done."},               // shorthand for one text block
      {"fault": "http", "status": 429, "error_type": "rate_limit_error",
       "message": "slow down", "headers": {"retry-after": "0"}},
      {"fault": "stream_error", "after_blocks": 1, "error_type": "overloaded_error",
       "message": "Overloaded", "content": [...], "partial": false},
      {"fault": "drop", "after_blocks": 1, "content": [...], "partial": true},
      {"fault": "malformed", "after_blocks": 1, "data": "{not json", "event": "...",
       "content": [...]},
      {"fault": "hang", "seconds": 30, "then": {"text": "late answer"}}
    ],
     "tool_choice_none": {"text": "A summary."}}  // optional: answers every request with
                                                  // tool_choice none, consuming no step

``tool_use`` blocks without an ``id`` get ``toolu_1``, ``toolu_2``, ... (one counter per
server). ``error_type`` of an http fault defaults from the status (400 invalid_request_error,
401 authentication_error, 429 rate_limit_error, 500 api_error, 529 overloaded_error).
``stream_error``/``drop`` stream ``content`` (default: a short text and a read_file call)
and fail after ``after_blocks`` complete blocks (``partial``: halfway through the next one).
A ``malformed`` fault streams ``content`` as far, then one frame whose data is ``data`` as it
is (by default JSON cut short) and ends the stream: a broken proxy or endpoint.
A ``hang`` sends nothing for ``seconds``, then closes the connection or answers ``then``;
``POST /_fake/release`` ends every hang waiting at once (a test decides when they answer).

Streaming follows the real event order: ``message_start`` (model echoed, usage with input
tokens), ``content_block_start``, ``ping``, ``content_block_delta`` (``text_delta`` a few
words at a time; ``input_json_delta`` with the JSON split into chunks, the first one ``""``),
``content_block_stop``, ..., ``message_delta`` (stop_reason, usage), ``message_stop``.
"""

from plansight.fakeapi.cache import (
    CacheUsage,
    PromptCache,
    canonical_json,
    estimate_tokens,
    prompt_blocks,
)
from plansight.fakeapi.models import model_info
from plansight.fakeapi.script import (
    Drop,
    Hang,
    HttpError,
    Malformed,
    Reply,
    Script,
    ScriptError,
    ScriptStep,
    Step,
    StepFunction,
    StreamError,
    reply,
    text_reply,
    tool_reply,
)
from plansight.fakeapi.server import FakeMessagesAPI, RecordedRequest
from plansight.fakeapi.signing import redacted_data, sign_thinking
from plansight.fakeapi.validation import validate_request

__all__ = [
    "CacheUsage",
    "Drop",
    "FakeMessagesAPI",
    "Hang",
    "HttpError",
    "Malformed",
    "PromptCache",
    "RecordedRequest",
    "Reply",
    "Script",
    "ScriptError",
    "ScriptStep",
    "Step",
    "StepFunction",
    "StreamError",
    "canonical_json",
    "estimate_tokens",
    "model_info",
    "prompt_blocks",
    "redacted_data",
    "reply",
    "sign_thinking",
    "text_reply",
    "tool_reply",
    "validate_request",
]
