"""The params of Plansight's requests, typed, and read strictly from what the client sent.

Each request with params has a frozen attrs class here (fields in snake_case, camelCase on
the wire, as lsprotocol's cattrs converter maps them). `ParamsReader.read` structures a
request's params with that converter and hooks of its own for the types below, which check
what the protocol says of each field: a field that breaks its rule is an invalid-params error
(-32602) whose message names the field and the rule ("'force' must be true or false.").
A field sent as null is as good as absent, as JSON-RPC clients expect; unknown fields are
ignored. (`initializationOptions` are read leniently instead: protocol/options.py.)
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, NewType, TypeVar, cast

import attrs
import cattrs
from cattrs.errors import ClassValidationError
from lsprotocol.converters import get_converter
from pygls.exceptions import JsonRpcException

from plansight.protocol.names import INVALID_PARAMS, RUN_MODES, camel_case, to_plain
from plansight.session.history import DEFAULT_LIMIT

if TYPE_CHECKING:
    from plansight.checkpoints.restore import RestoreRequest
    from plansight.engine.planmode import RunMode

Prompt = NewType("Prompt", str)  # non-blank text
Text = NewType("Text", str)  # a non-empty string: a checkpoint's id, a path, an item's id
TodoId = NewType("TodoId", str)  # a plan item's id as a run names it: a string or a number
Flag = NewType("Flag", bool)  # true or false (null: false)
PlanVersion = NewType("PlanVersion", int)
RunCount = NewType("RunCount", int)
Paths = NewType("Paths", tuple[str, ...])  # relative to the workspace
Mode = NewType("Mode", str)  # one of RUN_MODES (null: act)
TodoIds = NewType("TodoIds", tuple[str, ...])  # plan items' ids (version 4: runParallel)


class InvalidParams(JsonRpcException):
    """-32602, with a message that names the field at fault."""

    def __init__(self, message: str) -> None:
        super().__init__(message=message, code=INVALID_PARAMS)


class _Rule(ValueError):
    """A value that breaks its field's rule: the message is the rule."""


def _prompt(value: Any, _: type) -> str:
    if not isinstance(value, str) or not value.strip():
        raise _Rule("must be a non-empty string")
    return value


def _text(value: Any, _: type) -> str:
    if not isinstance(value, str) or not value:
        raise _Rule("must be a non-empty string")
    return value


def _todo_id(value: Any, _: type) -> str:
    if isinstance(value, bool) or not isinstance(value, str | int):
        raise _Rule("must be a plan item's id (a string)")
    return str(value).strip()


def _flag(value: Any, _: type) -> bool:
    if value is None:
        return False
    if not isinstance(value, bool):
        raise _Rule("must be true or false")
    return value


def _whole(rule: str, minimum: int | None = None) -> Callable[[Any, type], int]:
    def read(value: Any, _: type) -> int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise _Rule(rule)
        if minimum is not None and value < minimum:
            raise _Rule(rule)
        return value

    return read


def _paths(value: Any, _: type) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(p, str) and p for p in value):
        raise _Rule("must be a list of paths relative to the workspace")
    return tuple(value)


def _todo_ids(value: Any, _: type) -> tuple[str, ...]:
    if not isinstance(value, list) or not value:
        raise _Rule("must be a non-empty list of plan items' ids")
    return tuple(_todo_id(v, str) for v in value)


def _mode(value: Any, _: type) -> str:
    if value is None:
        return "act"
    if value not in RUN_MODES:
        raise _Rule(f"must be one of {', '.join(RUN_MODES)}, not {value!r}")
    return str(value)


@attrs.frozen
class RunParams:
    prompt: Prompt
    new_session: Flag = Flag(False)
    mode: Mode = Mode("act")
    todo_id: TodoId | None = None
    session_id: Text | None = None  # version 4: which session (None: the current one)

    @property
    def run_mode(self) -> RunMode:
        return cast("RunMode", self.mode)


@attrs.frozen
class EditPlanParams:
    items: Any = None  # the plan's own rules check them (PlanError names the rule broken)
    version: PlanVersion | None = None
    session_id: Text | None = None


@attrs.frozen
class HistoryParams:
    limit: RunCount = RunCount(DEFAULT_LIMIT)
    session_id: Text | None = None


@attrs.frozen
class SessionParams:
    """`plansight/compact`, `plansight/state`: which session (None: the current one)."""

    session_id: Text | None = None


@attrs.frozen
class SessionIdParams:
    """`plansight/openSession`, `plansight/deleteSession`."""

    id: Text


@attrs.frozen
class RunParallelParams:
    """`plansight/runParallel` (version 4)."""

    todo_ids: TodoIds
    session_id: Text | None = None
    # An addition of ours: answer once every worker ended and each change set was put to the
    # user (the terminal's /parallel).
    take_in: Flag = Flag(False)


@attrs.frozen
class WorkerParams:
    """`plansight/takeIn`, `plansight/dropChanges`, `plansight/cancel` (version 4): the item
    of session `session_id`'s worker (an addition of ours; None: the current session)."""

    todo_id: TodoId
    session_id: Text | None = None


@attrs.frozen
class NewSessionParams:
    title: Text | None = None


@attrs.frozen
class RenameSessionParams:
    id: Text
    title: Text


@attrs.frozen
class RestoreParams:
    checkpoint: Text | None = None
    todo_id: Text | None = None
    paths: Paths | None = None
    conversation: Flag = Flag(False)
    force: Flag = Flag(False)
    dry_run: Flag = Flag(False)
    session_id: Text | None = None

    def request(self) -> RestoreRequest:
        """The request the checkpoints take (InvalidParams unless exactly one of checkpoint
        and todoId is given)."""
        from plansight.checkpoints.restore import RestoreRequest  # the engine, once needed

        if (self.checkpoint is None) == (self.todo_id is None):
            raise InvalidParams("Give either 'checkpoint' (an id) or 'todoId' (a plan item).")
        return RestoreRequest(
            checkpoint=self.checkpoint,
            todo_id=self.todo_id,
            paths=self.paths,
            conversation=self.conversation,
            force=self.force,
            dry_run=self.dry_run,
        )


@attrs.frozen
class CheckpointFileParams:
    checkpoint: Text
    path: Text


P = TypeVar("P")


class ParamsReader:
    """Structures requests' params into the classes above (one converter, made once)."""

    def __init__(self) -> None:
        converter = get_converter(cattrs.Converter())
        hooks: dict[Any, Callable[[Any, type], Any]] = {
            Prompt: _prompt,
            Text: _text,
            TodoId: _todo_id,
            Flag: _flag,
            PlanVersion: _whole("must be a whole number (the plan's version)"),
            RunCount: _whole("must be a whole number of runs, 0 or more", minimum=0),
            Paths: _paths,
            Mode: _mode,
            TodoIds: _todo_ids,
        }
        for kind, hook in hooks.items():
            converter.register_structure_hook(kind, hook)
        self.converter = converter

    def read(self, raw: Any, kind: type[P]) -> P:
        """`raw` (pygls's namedtuples, or None) as a `kind`; InvalidParams naming the field
        at fault."""
        plain = to_plain(raw)
        if plain is None:
            plain = {}
        if not isinstance(plain, dict):
            raise InvalidParams("The params must be an object.")
        try:
            return self.converter.structure(plain, kind)
        except ClassValidationError as err:
            raise InvalidParams(self._message(err, kind)) from err

    def _message(self, err: ClassValidationError, kind: type) -> str:
        failed, _ = err.group_exceptions()
        if not failed:
            return f"Invalid params: {err}"
        exc, note = failed[0]
        name = camel_case(note.name)
        if isinstance(exc, KeyError):  # a required field is missing: its type says the rule
            try:
                self.converter.structure(None, note.type)
            except _Rule as rule:
                return f"'{name}' {rule}."
            return f"'{name}' is required."
        if isinstance(exc, _Rule):
            return f"'{name}' {exc}."
        return f"'{name}' is not valid: {exc}."
