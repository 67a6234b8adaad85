"""The conversation archive: each message kept once, each checkpoint's conversation loadable."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

from plansight.checkpoints.archive import ConversationArchive


def user(text: str) -> dict[str, Any]:
    return {"role": "user", "content": [{"type": "text", "text": text}]}


def assistant(text: str) -> dict[str, Any]:
    return {"role": "assistant", "content": [{"type": "text", "text": text}]}


def test_a_growing_conversation_stores_each_message_once(tmp_path: Path) -> None:
    archive = ConversationArchive(tmp_path / "conversations.jsonl")
    messages = [user("first prompt " + "x" * 5000), assistant("answer")]
    first = archive.capture(messages)
    archive.write(first)
    messages.append(user("second prompt"))
    second = archive.capture(messages)
    archive.write(second)
    # The second capture added the new message and its list; the long prompt was not repeated.
    assert len(first.lines) == 3 and len(second.lines) == 2
    assert archive.path.read_bytes().count(b"x" * 5000) == 1
    assert archive.load(first.digest) == messages[:2]
    assert archive.load(second.digest) == messages


def test_the_last_message_is_read_again_as_it_may_still_grow(tmp_path: Path) -> None:
    archive = ConversationArchive(tmp_path / "conversations.jsonl")
    messages = [user("prompt")]
    before = archive.capture(messages)
    archive.write(before)
    saved = copy.deepcopy(messages)
    messages[-1]["content"].append({"type": "text", "text": "joined later"})
    after = archive.capture(messages)
    archive.write(after)
    assert archive.load(before.digest) == saved
    assert archive.load(after.digest) == messages


def test_a_restart_does_not_store_what_the_file_already_holds(tmp_path: Path) -> None:
    path = tmp_path / "conversations.jsonl"
    archive = ConversationArchive(path)
    messages = [user("prompt"), assistant("answer")]
    archive.write(archive.capture(messages))
    size = path.stat().st_size
    again = ConversationArchive(path)
    again.load_index()
    same = again.capture(messages)
    assert same.lines == ()
    again.write(same)
    assert path.stat().st_size == size


def test_pruning_keeps_what_kept_checkpoints_name(tmp_path: Path) -> None:
    archive = ConversationArchive(tmp_path / "conversations.jsonl")
    old = archive.capture([user("old session " + "y" * 3000)])
    archive.write(old)
    new_messages = [user("new session"), assistant("hi")]
    new = archive.capture(new_messages)
    archive.write(new)
    archive.prune([new.digest])
    assert archive.load(new.digest) == new_messages
    assert archive.load(old.digest) is None
    assert b"y" * 3000 not in archive.path.read_bytes()


def test_a_damaged_entry_makes_that_conversation_unavailable_not_wrong(tmp_path: Path) -> None:
    archive = ConversationArchive(tmp_path / "conversations.jsonl")
    kept = archive.capture([user("kept")])
    archive.write(kept)
    with archive.path.open("ab") as handle:
        handle.write(b"0123abcd\t{not json")  # a write a full disk cut short
    assert archive.load(kept.digest) == [user("kept")]
    assert archive.load("0123abcd") is None
    assert archive.load("Lmissing") is None


def test_pruning_keeps_the_conversation_last_captured_whose_checkpoint_is_on_its_way(
    tmp_path: Path,
) -> None:
    archive = ConversationArchive(tmp_path / "conversations.jsonl")
    messages = [user("still current")]
    archive.write(archive.capture(messages))
    pending = archive.capture(messages)  # already held: nothing new to write
    assert pending.lines == ()
    archive.prune([])  # no kept checkpoint names it (yet)
    archive.write(pending)
    assert archive.load(pending.digest) == messages
