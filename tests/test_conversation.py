"""The conversation (conversation.py): whatever happens to a run, the next request is valid.

The oracle is the fake API's validation of a request, the real Messages API's rules (roles
alternate, every tool_use answered by a tool_result at the start of the next user message, no
blank text): a conversation the API refuses is one the user can no longer continue.
"""

from __future__ import annotations

from typing import Any

import pytest

from plansight.engine.conversation import Conversation, text_block, tool_result_block
from plansight.fakeapi import validate_request

TOOLS = [
    {"name": n, "description": n, "input_schema": {"type": "object"}} for n in ("read_file", "bash")
]


def refusal(conversation: Conversation) -> str | None:
    """What the API would answer a request carrying this conversation: None if it takes it."""
    body = {
        "model": "claude-sonnet-5-5",
        "max_tokens": 100,
        "tools": TOOLS,
        "messages": conversation.messages,
    }
    return validate_request(body)


def tool_use(tool_id: str, name: str = "read_file") -> dict[str, Any]:
    return {"type": "tool_use", "id": tool_id, "name": name, "input": {}}


def test_a_round_of_prompt_tool_call_and_result_is_a_valid_request() -> None:
    conversation = Conversation()
    conversation.add_user([text_block("Read hello.py")])
    conversation.add_assistant([text_block("Reading."), tool_use("t1")])
    assert conversation.unanswered_tool_uses() == [tool_use("t1")]
    conversation.add_user(
        [tool_result_block("t1", "print('hi')", False), text_block("<reminder>…</reminder>")]
    )
    assert conversation.unanswered_tool_uses() == []
    assert refusal(conversation) is None
    assert conversation.messages[-1]["content"][0] == {
        "type": "tool_result",
        "tool_use_id": "t1",
        "content": "print('hi')",
    }


def test_an_error_result_is_marked_as_one() -> None:
    assert tool_result_block("t1", "no such file", True)["is_error"] is True
    assert "is_error" not in tool_result_block("t1", "fine", False)


def test_a_prompt_after_a_cancelled_stream_joins_the_users_turn() -> None:
    """Cancelled before the model answered: the next prompt must not make two user turns."""
    conversation = Conversation()
    conversation.add_user([text_block("slow")])
    conversation.add_user([text_block("again")])
    assert [m["role"] for m in conversation.messages] == ["user"]
    assert [b["text"] for b in conversation.messages[0]["content"]] == ["slow", "again"]
    assert refusal(conversation) is None


def test_a_stored_string_content_is_joined_as_blocks() -> None:
    conversation = Conversation([{"role": "user", "content": "from an older store"}])
    conversation.add_user([text_block("next")])
    assert conversation.messages == [
        {
            "role": "user",
            "content": [text_block("from an older store"), text_block("next")],
        }
    ]
    assert refusal(conversation) is None


@pytest.mark.parametrize("blank", ["", " ", "\n\n", "\t \n"])
def test_blank_text_is_never_added(blank: str) -> None:
    conversation = Conversation()
    conversation.add_user([text_block(blank)])
    assert conversation.messages == []  # no empty user turn either
    conversation.add_user([text_block("Hi"), text_block(blank)])
    assert conversation.messages == [{"role": "user", "content": [text_block("Hi")]}]
    assert refusal(conversation) is None


def test_a_paused_turn_and_its_continuation_are_one_assistant_turn() -> None:
    conversation = Conversation()
    conversation.add_user([text_block("Research")])
    conversation.add_assistant([text_block("Looking it up")])
    conversation.add_assistant([text_block("and here is the rest.")])
    assert [m["role"] for m in conversation.messages] == ["user", "assistant"]
    assert len(conversation.messages[1]["content"]) == 2
    conversation.add_assistant([])  # nothing streamed: nothing added
    assert len(conversation.messages) == 2


def test_repair_answers_every_dangling_tool_use_so_the_next_run_is_valid() -> None:
    """The run was cancelled (or the server killed) while tools ran: each call gets an error
    result saying why, and the next prompt joins that turn after the results."""
    conversation = Conversation()
    conversation.add_user([text_block("Do two things")])
    conversation.add_assistant([tool_use("a"), tool_use("b", "bash")])
    conversation.repair("The run was cancelled before this tool finished.")
    results = conversation.messages[-1]["content"]
    assert [(r["tool_use_id"], r["is_error"]) for r in results] == [("a", True), ("b", True)]
    assert all("cancelled" in r["content"] for r in results)
    conversation.add_user([text_block("Carry on")])
    assert refusal(conversation) is None
    assert [b["type"] for b in conversation.messages[-1]["content"]] == [
        "tool_result",
        "tool_result",
        "text",
    ]


def test_repair_leaves_a_valid_conversation_as_it_is() -> None:
    conversation = Conversation()
    conversation.add_user([text_block("Hi")])
    conversation.add_assistant([text_block("Hello.")])
    before = [dict(m) for m in conversation.messages]
    conversation.repair("never used")
    assert conversation.messages == before
    empty = Conversation()
    empty.repair("never used")
    assert empty.messages == []


def test_replace_and_clear_change_the_conversation_in_place() -> None:
    messages: list[dict[str, Any]] = []
    conversation = Conversation(messages)
    conversation.add_user([text_block("one")])
    assert messages is conversation.messages  # the session's store sees the same list
    conversation.replace([{"role": "user", "content": [text_block("summary")]}])
    assert messages == [{"role": "user", "content": [text_block("summary")]}]
    conversation.clear()
    assert messages == []
