"""``python -m plansight.fakeapi --script recording.json [--port 0] [--latency-ms N]
[--context-window TOKENS]``.

Prints ``{"baseUrl": "http://127.0.0.1:PORT"}`` on one stdout line once listening, logs to
stderr, serves until SIGTERM or SIGINT.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import logging
import signal
import sys

from plansight.fakeapi.script import Script, ScriptError
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


async def _serve(args: argparse.Namespace, script: Script) -> None:
    api = FakeMessagesAPI(
        script,
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
    except (OSError, ScriptError) as exc:
        logging.getLogger("plansight.fakeapi").error("cannot load script: %s", exc)
        return 2
    logging.getLogger("plansight.fakeapi").info("loaded %d steps", len(script))
    asyncio.run(_serve(args, script))
    return 0


if __name__ == "__main__":
    sys.exit(main())
