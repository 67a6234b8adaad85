"""The terminal's live region in a real terminal (tmux): resizing the window while the model's
text streams leaves every line of the answer once in the scrollback and no piece of the live
region behind; notices printed while the user types never overwrite the typed line."""

from __future__ import annotations

import re
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from plansight.fakeapi import FakeMessagesAPI, text_reply, tool_reply
from test_cli_interactive import PLANSIGHT, at_prompt

from test_cli_terminal import Terminal, api_env, terminal  # noqa: F401 (the fixture)

PARAGRAPHS = 24


def long_answer() -> str:
    """Paragraphs whose first and last words are unique markers, each long enough to wrap at 40
    columns, in one paragraph being written (the live region's) at a time."""
    return "\n\n".join(
        f"Begin{n:02d} the answer goes on with words that wrap at narrow widths, and more "
        f"words again so that the paragraph spans rows End{n:02d}."
        for n in range(PARAGRAPHS)
    )


def joined(lines: list[str]) -> str:
    return re.sub(r"\s+", " ", " ".join(lines))


@pytest.mark.parametrize(
    ("width", "screen"),
    [
        (40, "full"),
        (120, "full"),
        (40, "new"),
        (120, "new"),
        (40, "wider"),
        (120, "wider"),
        (40, "taller"),
    ],
)
def test_resizing_while_text_streams_leaves_each_line_once_and_no_live_region(
    tmp_path: Path,
    terminal: Callable[[int, int], Terminal],  # noqa: F811
    fake_api: FakeMessagesAPI,
    hello_workspace: Path,
    width: int,
    screen: str,
) -> None:
    if screen != "full":  # a plan in the live region: more of its rows than text above it
        fake_api.push(tool_reply("todo", done_plan(8)))
    fake_api.push(text_reply(long_answer(), chunk_delay=0.03))
    term = terminal(width, 20 if screen == "full" else 40)
    command = [sys.executable, "-m", "plansight", "run", "Explain", "--yes"]
    term.start(command, api_env(tmp_path, fake_api), hello_workspace)
    if screen == "full":  # as a terminal in use is
        term.wait_for(
            "a full screen",
            lambda now: term.exit_status() is not None or len(now) > term.height + 4,
        )
    else:
        # A new window, mostly blank rows below the text: tmux counts them as lines when it
        # re-wraps, and with the region's rows re-wrapped at a narrower width they were more
        # than the screen holds; it put the region's top into the scrollback (the cursor to
        # the top left), out of reach of any erase. The first resize comes with the answer's
        # first words.
        term.wait_for(
            "the answer's first words",
            lambda now: term.exit_status() is not None or "Begin" in joined(now),
        )
    # Resize back and forth while the text streams, each resize once the screen has moved on
    # (a new paragraph began), until the run has ended.
    sizes = [(width // 2, 16), (width, 24), (max(30, width - 17), 12), (width + 23, 30)]
    if screen == "new":
        sizes = narrower_then_lower(width)
    elif screen == "wider":
        sizes = wider_and_back(width)
    elif screen == "taller":
        sizes = taller_then_much_narrower(width)
    resizes = resize_while_it_streams(term, sizes, lambda: term.exit_status() is not None)
    assert term.exit_status() == 0
    assert resizes >= 8, resizes
    assert_each_line_once_and_no_live_region(term.scrollback())


def narrower_then_lower(width: int) -> list[tuple[int, int]]:
    """Half as wide at once, at the same height (the blank rows all stay), then lower and
    taller again and again, with the plan's tall live region up: frames made for a taller
    window are read after it got lower."""
    return [
        (width // 2, 40),
        (width // 2, 16),
        (width // 2, 40),
        (width // 2, 12),
        (width // 2, 30),
    ]


def wider_and_back(width: int) -> list[tuple[int, int]]:
    """Narrower, wider and narrower again at the same height, then lower and taller: a wider
    window wraps the plan and the paragraph being written in fewer rows, and the region that
    got shorter must not leave blank rows below it for the next narrowing to count."""
    return [
        (width // 2, 40),
        (width, 40),
        (width // 2, 40),
        (width, 40),
        (width // 2, 16),
        (width, 24),
        (30, 12),
        (width + 23, 30),
    ]


def taller_then_much_narrower(width: int) -> list[tuple[int, int]]:
    """Taller, then a third as wide at once: the region's rows drawn at the full width each
    take three rows when tmux re-wraps them, and any blank row left below the region (by a
    wider window before) is one more for the screen to hold."""
    return [(width, 64), (width // 3, 64), (width, 64), (width // 3, 40), (width, 40)]


def resize_while_it_streams(
    term: Terminal, sizes: list[tuple[int, int]], ended: Callable[[], bool]
) -> int:
    """Resize the window through `sizes` (over and over) while the answer streams, each
    resize once the screen has moved on (a new paragraph began), until `ended`; how many."""
    seen = 0
    resizes = 0
    while not ended():
        lines = term.wait_for(
            "more of the answer or the end",
            lambda now, seen=seen: ended() or joined(now).count("Begin") > seen,
        )
        seen = joined(lines).count("Begin")
        x, y = sizes[resizes % len(sizes)]
        term.tmux("resize-window", "-t", "main", "-x", str(x), "-y", str(y))
        resizes += 1
    return resizes


def assert_each_line_once_and_no_live_region(lines: list[str]) -> None:
    shown = joined(lines)
    for n in range(PARAGRAPHS):
        for marker in (f"Begin{n:02d}", f"End{n:02d}"):
            assert shown.count(marker) == 1, f"{marker} x{shown.count(marker)}:\n" + "\n".join(
                lines
            )
    for live in ("the model is writing", "waiting for the model", "starting the language"):
        assert live not in shown, "\n".join(lines)


def done_plan(count: int) -> dict[str, object]:
    """A plan of `count` items, all completed: shown in the live region, and nothing left
    open for the done gate to ask about."""
    made = items(*(f"Step {n} of the explanation" for n in range(count)))
    for item in made["items"]:  # type: ignore[attr-defined]
        item["status"] = "completed"
    return made


def test_after_ctrl_l_a_task_streaming_through_resizes_leaves_no_live_region(
    tmp_path: Path,
    terminal: Callable[[int, int], Terminal],  # noqa: F811
    fake_api: FakeMessagesAPI,
    hello_workspace: Path,
) -> None:
    # Ctrl-L at the prompt clears the screen: the task's live region comes up with the screen
    # below it blank, the case tmux pushed the region's top into the scrollback for.
    fake_api.push(tool_reply("todo", done_plan(8)), text_reply(long_answer(), chunk_delay=0.03))
    term = terminal(40, 40)
    term.start(PLANSIGHT, api_env(tmp_path, fake_api), hello_workspace)
    term.wait_for("the prompt", at_prompt)
    term.send("C-l")
    term.wait_for(
        "a cleared screen, the prompt on its first row",
        lambda _: term.tmux("capture-pane", "-p", "-t", "main").startswith("›"),
    )
    term.type_line("Explain")
    term.wait_for("the answer's first words", lambda now: "Begin" in joined(now))
    ended = lambda: at_prompt(term.scrollback())  # noqa: E731
    assert resize_while_it_streams(term, narrower_then_lower(40), ended) >= 8
    assert_each_line_once_and_no_live_region(term.scrollback())
    term.send("C-d")
    term.wait_for("the session's end", lambda _: term.exit_status() is not None)


@pytest.mark.parametrize("inside_tmux", [True, False])
def test_the_paragraph_being_written_sits_where_it_will_be_printed(
    tmp_path: Path,
    terminal: Callable[[int, int], Terminal],  # noqa: F811
    fake_api: FakeMessagesAPI,
    hello_workspace: Path,
    inside_tmux: bool,
) -> None:
    fake_api.push(text_reply(long_answer(), chunk_delay=0.03))
    term = terminal(80, 30)
    command = [sys.executable, "-m", "plansight", "run", "Explain", "--yes"]
    if not inside_tmux:  # as another terminal: the region is not kept at the bottom
        command = ["env", "-u", "TMUX", *command]
    term.start(command, api_env(tmp_path, fake_api), hello_workspace)
    seen: list[list[str]] = []

    def a_paragraph_half_written(_: list[str]) -> bool:
        rows = term.tmux("capture-pane", "-p", "-t", "main").splitlines()
        begun = [n for n, row in enumerate(rows) if re.match(r"Begin(0[2-9]|1\d)", row)]
        if begun and f"End{rows[begun[-1]][5:7]}" not in " ".join(rows[begun[-1] :]):
            seen.append(rows)
            return True
        return term.exit_status() is not None

    term.wait_for("a paragraph in the live region, half written", a_paragraph_half_written)
    assert seen, "the run ended before a paragraph was seen half written"
    rows = seen[-1]
    begun = max(n for n, row in enumerate(rows) if row.startswith("Begin"))
    # One blank row above it, the one it will be printed under: done, it does not move.
    assert rows[begun - 1].strip() == "" and rows[begun - 2].rstrip().endswith("."), "\n".join(rows)
    term.wait_for("the end", lambda _: term.exit_status() is not None)
    assert_each_line_once_and_no_live_region(term.scrollback())


def items(*texts: str) -> dict[str, object]:
    return {"items": [{"id": str(n), "text": t, "status": "pending"} for n, t in enumerate(texts)]}


@pytest.mark.parametrize("width", [40, 120])
def test_a_piped_plan_run_shows_the_proposal_the_question_and_the_answer_once(
    tmp_path: Path,
    terminal: Callable[[int, int], Terminal],  # noqa: F811
    fake_api: FakeMessagesAPI,
    hello_workspace: Path,
    width: int,
) -> None:
    fake_api.push(
        tool_reply("todo", items("Add type hints", "Add a guard"), text="My plan."),
        tool_reply("submit_plan", {"summary": "Hints first, then the guard."}),
        tool_reply("ask_user", {"question": "Which style of hints?", "options": ["A", "B"]}),
        text_reply("All finished here."),
        text_reply("Still finished."),
    )
    term = terminal(width, 40)
    command = [sys.executable, "-m", "plansight", "run", "Refactor", "--plan"]
    term.start(
        ["sh", "-c", '"$@" | cat', "sh", *command], api_env(tmp_path, fake_api), hello_workspace
    )
    term.wait_for("the plan question", lambda now: joined(now).endswith("[c]ancel:"))
    term.send("a", "Enter")
    term.wait_for("the question", lambda now: joined(now).endswith("let the agent decide):"))
    term.send("2", "Enter")
    lines = term.wait_for("the end", lambda _: term.exit_status() is not None)
    assert term.exit_status() == 0, "\n".join(lines)
    shown = joined(lines)
    for once in (
        "plan proposed for your approval",
        "[c]ancel: a",
        "? Which style of hints?",
        "let the agent decide): 2",
        "All finished here.",
        "done after",
    ):
        assert shown.count(once) == 1, f"{once!r} x{shown.count(once)}:\n" + "\n".join(lines)
