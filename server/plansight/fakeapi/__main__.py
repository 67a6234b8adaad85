"""``python -m plansight.fakeapi --script recording.json [--port 0] [--latency-ms N]
[--context-window TOKENS]``.

Prints ``{"baseUrl": "http://127.0.0.1:PORT"}`` on one stdout line once listening, logs to
stderr, serves until SIGTERM or SIGINT. A recording's `"models"` list is what its Models API
serves (`GET /v1/models`, `GET /v1/models/{id}`); without one those answer 404.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import logging
import signal
import sys
from pathlib import Path
from typing import Any

from plansight.fakeapi.models import model_info
from plansight.fakeapi.script import Script, ScriptError, ScriptStep
from plansight.fakeapi.server import FakeMessagesAPI


def _parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m plansight.fakeapi",
        description="Serve a scripted fake of the Anthropic Messages API on loopback.",
    )
    parser.add_argument("--script", help="recording JSON ({'steps': [...]}); default: empty")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0, help="0 picks a free port")
    parser.add_argument(
        "--latency-ms", type=float, default=0.0, help="delay before each scripted answer"
    )
    parser.add_argument(
        "--min-cacheable-tokens", type=int, default=1024, help="prompt-cache minimum prefix"
    )
    parser.add_argument(
        "--context-window",
        type=int,
        default=None,
        help="refuse requests of more input tokens with the real 400 'prompt is too long'",
    )
    parser.add_argument("--no-auth", action="store_true", help="do not require an API key")
    parser.add_argument("--log-level", default="INFO")
    return parser.parse_args(argv)


def _models_of(path: str | None) -> list[dict[str, Any]] | None:
    """The Models API's models a recording lists (`"models": [{id, display_name?, adaptive?,
    enabled?}]`), as ModelInfo; None where it lists none (the Models API then answers 404)."""
    if not path:
        return None
    listed = json.loads(Path(path).read_text(encoding="utf-8")).get("models")
    if not isinstance(listed, list):
        return None
    return [
        model_info(
            str(m["id"]),
            display_name=m.get("display_name"),
            adaptive=bool(m.get("adaptive", False)),
            enabled=bool(m.get("enabled", True)),
        )
        for m in listed
    ]


def _conversations_of(path: str | None) -> dict[str, list[ScriptStep]] | None:
    """The conversations a recording serves at once (`"conversations": {marker: [step]}`, for
    parallel workers: each request goes to the conversation whose marker its opening holds),
    so that a process outside Python (the VS Code end-to-end test) can script several."""
    if not path:
        return None
    listed = json.loads(Path(path).read_text(encoding="utf-8")).get("conversations")
    if not isinstance(listed, dict):
        return None
    return {
        str(marker): list(Script.from_dict({"steps": steps}).steps)
        for marker, steps in listed.items()
    }


async def _serve(
    args: argparse.Namespace,
    script: Script,
    conversations: dict[str, list[ScriptStep]] | None = None,
) -> None:
    api = FakeMessagesAPI(
        script,
        conversations=conversations,
        models=_models_of(args.script),
        host=args.host,
        port=args.port,
        latency=args.latency_ms / 1000.0,
        min_cacheable_tokens=args.min_cacheable_tokens,
        require_api_key=not args.no_auth,
        context_window=args.context_window,
    )
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        with contextlib.suppress(NotImplementedError, RuntimeError):
            loop.add_signal_handler(sig, stop.set)
    await api.start_async()
    try:
        sys.stdout.write(json.dumps({"baseUrl": api.base_url}) + "\n")
        sys.stdout.flush()
        await stop.wait()
    finally:
        await api.stop_async()


def main(argv: list[str] | None = None) -> int:
    args = _parse_args(argv)
    logging.basicConfig(
        stream=sys.stderr,
        level=args.log_level.upper(),
        format="%(asctime)s %(name)s %(levelname)s %(message)s",
    )
    try:
        script = Script.from_json(args.script) if args.script else Script()
        conversations = _conversations_of(args.script)
    except (OSError, ScriptError) as exc:
        logging.getLogger("plansight.fakeapi").error("cannot load script: %s", exc)
        return 2
    logging.getLogger("plansight.fakeapi").info("loaded %d steps", len(script))
    asyncio.run(_serve(args, script, conversations))
    return 0


if __name__ == "__main__":
    sys.exit(main())
