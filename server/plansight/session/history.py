"""The runs' history: each run's `plansight/event` payloads, kept in the session's storage so a
client can show past runs after a restart (`plansight/history`, protocol version 2).

Stored as a JSON Lines log (`history.jsonl` in the storage folder), one record per line, each
appended with a single write() (`atomic.append_whole`: kill -9 cannot cut a line in half; a line
cut short by a full disk, or damaged otherwise, is skipped when the log is read):

    {"run": 7, "startedAt": "2026-12-01T09:30:00Z", "event": {"type": "runStarted", ...}}
    {"run": 7, "event": {"type": "textDelta", "text": "…"}}

Consecutive `textDelta`s (and `thinkingDelta`s) of one model turn (the same optional `turn`) are
merged: gathered in memory and written as one record when another event or turn comes, at the
end of the run, or once they pass a size; records that still follow each other are merged again
when read, so the history shows one per stretch, and two turns' text stays two.
Every other payload is kept as it was sent (PROTOCOL.md: "the stored `plansight/event`
payloads", only `toolInputDelta`s left out), `planDraft` and `checkpoint` included; a run's
`checkpoint` events come before its `runFinished`. Events outside a run are not part of any
run's history.

Bounded: at most `max_runs` runs and about `max_bytes` on disk; past either, the log is
rewritten atomically with the newest runs that fit. A string longer than `max_value` characters
(a whole file's content in a `write_file` call) is kept cut, saying how much was left out.
`newSession` and `plansight/reset` leave the history alone (the protocol says so); the next run
is marked as the start of a new session.

What the user did between runs (an undo, a restore) is kept with the run before it, as a
record of its own (`{"run": 7, "after": {"type": "restored", ...}}`), and goes out in that run's
optional `after` list, so that a client shows it again after a restart.
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from plansight.workspace.atomic import append_whole, json_text, write_atomic

log = logging.getLogger(__name__)

HISTORY = "history.jsonl"
# Left out, as PROTOCOL.md says (the finished `toolCall` has the whole input).
NOT_KEPT = frozenset({"toolInputDelta", "mcp", "history"})  # mcp: the servers now, not the run
MERGED = frozenset({"textDelta", "thinkingDelta"})
DEFAULT_LIMIT = 20


@dataclass
class StoredRun:
    number: int
    started_at: str
    events: list[dict[str, Any]] = field(default_factory=list)
    new_session: bool = False
    # What the user did after the run, before the next one (an undo, a restore).
    after: list[dict[str, Any]] = field(default_factory=list)

    @property
    def prompt(self) -> str:
        first = self.events[0] if self.events else {}
        prompt = first.get("prompt") if first.get("type") == "runStarted" else None
        return prompt if isinstance(prompt, str) else ""

    @property
    def result(self) -> dict[str, Any] | None:
        last = self.events[-1] if self.events else {}
        result = last.get("result") if last.get("type") == "runFinished" else None
        return result if isinstance(result, dict) else None

    def to_wire(self) -> dict[str, Any]:
        wire: dict[str, Any] = {
            "prompt": self.prompt,
            "startedAt": self.started_at,
            "events": self.events,
        }
        if (result := self.result) is not None:
            wire["result"] = result
        if self.new_session:
            wire["newSession"] = True  # an optional field of ours: the run started a new session
        if self.after:
            wire["after"] = self.after  # optional too: what the user did after the run
        return wire


def now_iso() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds").replace("+00:00", "Z")


def cut_long_strings(value: Any, limit: int) -> Any:
    """`value` with every string longer than `limit` cut, saying how much was left out."""
    if isinstance(value, str):
        if len(value) <= limit:
            return value
        return f"{value[:limit]}\n… ({len(value) - limit} more characters not kept in the history)"
    if isinstance(value, dict):
        return {k: cut_long_strings(v, limit) for k, v in value.items()}
    if isinstance(value, list):
        return [cut_long_strings(v, limit) for v in value]
    return value


def merges_with(last: dict[str, Any] | None, event: dict[str, Any]) -> bool:
    """Whether `event` continues `last`: deltas of the same kind and the same model turn."""
    return (
        last is not None
        and event.get("type") in MERGED
        and last.get("type") == event.get("type")
        and last.get("turn") == event.get("turn")
        and isinstance(event.get("text"), str)
    )


def merge_into(events: list[dict[str, Any]], event: dict[str, Any]) -> None:
    """Append `event`, merging it into the last one when it continues it (`merges_with`)."""
    last = events[-1] if events else None
    if last is not None and merges_with(last, event):
        last["text"] = f"{last.get('text', '')}{event['text']}"
    else:
        events.append(dict(event))


@dataclass(frozen=True)
class RecentRuns:
    """The last runs' events, newest last, as `plansight/history` answers them."""

    runs: list[dict[str, Any]]

    def to_wire(self) -> dict[str, Any]:
        return {"runs": self.runs}


class RunHistory:
    """The history log of one storage folder. Not thread-safe: the server's event loop owns it."""

    def __init__(
        self,
        directory: Path,
        *,
        max_runs: int = 50,
        max_bytes: int = 4_000_000,
        max_value: int = 8_000,
        flush_text_at: int = 4_000,
        read_only: bool = False,
    ) -> None:
        """`read_only`: read the log, never write it (a read-only view's)."""
        self.path = directory / HISTORY
        self.read_only = read_only
        self.max_runs = max_runs
        self.max_bytes = max_bytes
        self.max_value = max_value
        self.flush_text_at = flush_text_at
        self._runs: list[StoredRun] | None = None  # read on first use
        self._current: StoredRun | None = None
        self._pending: dict[str, Any] | None = None  # deltas not written yet
        self._bytes = 0
        self._new_session = False

    # Recording -------------------------------------------------------------------------------

    def record(self, payload: dict[str, Any]) -> None:
        """One `plansight/event` payload, as it was sent."""
        kind = payload.get("type")
        if kind in NOT_KEPT:
            return
        runs = self._loaded()
        event = dict(payload)
        if kind == "runStarted":
            self._write_pending()
            run = StoredRun(
                runs[-1].number + 1 if runs else 1, now_iso(), [event], self._new_session
            )
            self._new_session = False
            runs.append(run)
            self._current = run
            head: dict[str, Any] = {"run": run.number, "startedAt": run.started_at}
            if run.new_session:
                head["newSession"] = True
            self._write_line({**head, "event": event})
            return
        current = self._current
        if current is None:
            return  # not part of a run
        merge_into(current.events, event)
        if kind in MERGED and isinstance(event.get("text"), str):
            if self._pending is not None and merges_with(self._pending, event):
                self._pending["text"] += event["text"]
            else:
                self._write_pending()
                self._pending = dict(event)
            if len(self._pending["text"]) >= self.flush_text_at:
                self._write_pending()  # a long answer is not all lost to a kill -9
            return
        self._write_pending()
        self._write_line({"run": current.number, "event": event})
        if kind == "runFinished":
            self._current = None
            self._bound()

    def record_after(self, record: dict[str, Any]) -> None:
        """Something the user did between runs (an undo, a restore): kept with the last run;
        dropped when there is none yet (no run to show it under)."""
        runs = self._loaded()
        if not runs or self._current is not None:
            return
        run = runs[-1]
        run.after.append(dict(record))
        self._write_line({"run": run.number, "after": record})

    def mark_new_session(self) -> None:
        """The conversation was reset: the next run starts a new session."""
        self._new_session = True

    def flush(self) -> None:
        """Write the deltas gathered so far (e.g. at shutdown)."""
        self._write_pending()

    def _write_pending(self) -> None:
        pending, self._pending = self._pending, None
        if pending is not None and self._current is not None:
            self._write_line({"run": self._current.number, "event": pending})

    def _write_line(self, record: dict[str, Any]) -> None:
        record = cut_long_strings(record, self.max_value)
        line = (json_text(record) + "\n").encode()  # a restored name may not be UTF-8
        if self.read_only:
            return
        try:
            if self._bytes == 0:
                self.path.parent.mkdir(parents=True, exist_ok=True)
            append_whole(self.path, line)
        except OSError as err:
            # The history is a convenience: a full disk must not stop the run.
            log.error("could not append to %s: %s", self.path, err)
            return
        self._bytes += len(line)

    def _bound(self) -> None:
        runs = self._loaded()
        if self.read_only or (len(runs) <= self.max_runs and self._bytes <= self.max_bytes):
            return
        kept: list[StoredRun] = []
        size = 0
        for run in reversed(runs[-self.max_runs :]):
            run_size = sum(len(json.dumps(e, ensure_ascii=False)) + 40 for e in run.events)
            if kept and size + run_size > self.max_bytes // 2:
                break  # keep room to grow before the next rewrite
            kept.append(run)
            size += run_size
        kept.reverse()
        self._rewrite(kept)

    def _rewrite(self, runs: list[StoredRun]) -> None:
        lines: list[str] = []
        for run in runs:
            for index, event in enumerate(run.events):
                record: dict[str, Any] = {"run": run.number}
                if index == 0:
                    record["startedAt"] = run.started_at
                    if run.new_session:
                        record["newSession"] = True
                record["event"] = event
                lines.append(
                    json.dumps(cut_long_strings(record, self.max_value), ensure_ascii=False)
                )
            for after in run.after:
                lines.append(
                    json.dumps(
                        cut_long_strings({"run": run.number, "after": after}, self.max_value),
                        ensure_ascii=False,
                    )
                )
        data = "".join(f"{line}\n" for line in lines).encode()
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            write_atomic(self.path, data)
        except OSError as err:
            log.error("could not rewrite %s: %s", self.path, err)
            return
        assert self._runs is not None
        self._runs[:] = runs
        self._bytes = len(data)

    # Reading ---------------------------------------------------------------------------------

    def runs(self, limit: int = DEFAULT_LIMIT) -> list[dict[str, Any]]:
        """The last `limit` runs, newest last; the one in progress (if any) without `result`."""
        if limit <= 0:
            return []
        return [run.to_wire() for run in self._loaded()[-limit:]]

    def _loaded(self) -> list[StoredRun]:
        if self._runs is None:
            self._runs = self._read()
            self._bound()
        return self._runs

    def _read(self) -> list[StoredRun]:
        try:
            data = self.path.read_bytes()
        except FileNotFoundError:
            return []
        except OSError as err:
            log.error("could not read %s: %s", self.path, err)
            return []
        self._bytes = len(data)
        runs: dict[int, StoredRun] = {}
        skipped = 0
        for line in data.decode("utf-8", errors="replace").splitlines():
            try:
                record = json.loads(line)
                number = record["run"]
                after = record.get("after")
                event = record["event"] if after is None else None
                if not isinstance(number, int) or not isinstance(event or after, dict):
                    raise ValueError("not a history record")
            except (ValueError, KeyError, TypeError, AttributeError):
                skipped += 1
                continue
            run = runs.get(number)
            if after is not None:
                if run is None:
                    skipped += 1
                else:
                    run.after.append(after)
                continue
            assert event is not None
            if run is None:
                if event.get("type") != "runStarted":
                    skipped += 1  # the start of this run was lost: its rest means little
                    continue
                started = record.get("startedAt")
                run = runs[number] = StoredRun(
                    number,
                    started if isinstance(started, str) else "",
                    new_session=record.get("newSession") is True,
                )
                run.events.append(event)
                continue
            merge_into(run.events, event)
        if skipped:
            log.warning("%s: skipped %d damaged history records", self.path, skipped)
        return [runs[n] for n in sorted(runs)]
