"""The plan as a file in the workspace (protocol version 4), through the real language server,
real files and the fake Messages API: the model's todo call → the file's exact text; a save
by a plain `open().write()` → the plan, the `todos` notification and the model's next
request; a stale save merged per item; a broken save (diagnostic on its line, `.rejected.md`,
the plan unchanged); a deleted file written again; a save and a plan change at the same time;
the model's `write_file` on the plan file refused.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
from pathlib import Path
from typing import Any

import pytest

from plansight.fakeapi import FakeMessagesAPI
from plansight.fakeapi import text_reply as text
from plansight.fakeapi import tool_reply as tool

from conftest import wait_until
from lsp_harness import EditorHandle, start_editor

PLAN = {
    "items": [
        {"id": "1", "text": "Read the greeting", "status": "completed"},
        {
            "id": "2",
            "text": "Make it polite",
            "status": "in_progress",
            "notes": "Keep the exclamation mark.",
        },
        {"id": "3", "text": "Run the tests", "status": "pending"},
    ]
}


def read(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None


async def session_id(handle: EditorHandle) -> str:
    listed = (await handle.request("plansight/sessions", {}))["sessions"]
    return str(next(s["id"] for s in listed if s["current"]))


def plan_file(root: Path, sid: str) -> Path:
    [found] = list((root / ".plansight" / "plans").glob(f"*-{sid[:4]}.md"))
    return found


async def file_says(path: Path, expected: str) -> None:
    await wait_until(lambda: read(path) == expected, f"{path.name} to read {expected!r}")


async def first_run(handle: EditorHandle, root: Path) -> tuple[str, Path]:
    await handle.request("plansight/run", {"prompt": "Greet politely\nsecond line"})
    sid = await session_id(handle)
    await wait_until(
        lambda: list((root / ".plansight" / "plans").glob(f"*-{sid[:4]}.md")), "the plan file"
    )
    return sid, plan_file(root, sid)


def expected_text(sid: str, version: int, items: str, scratchpad: str = "") -> str:
    return (
        f"# Greet politely\n<!-- plansight: session {sid}, version {version} -->\n\n"
        f"{items}\n## Scratchpad\n{scratchpad}"
    )


ITEMS = (
    "- [x] 1. Read the greeting\n"
    "- [~] 2. Make it polite\n"
    "  Keep the exclamation mark.\n"
    "- [ ] 3. Run the tests\n"
)


async def test_the_todo_call_writes_the_file_in_its_exact_form(
    hello_workspace: Path, tmp_path: Path
) -> None:
    steps = [
        tool("todo", PLAN),
        tool("write_scratchpad", {"content": "The greeting lives in hello.py."}),
        text("Planned."),
    ]
    with FakeMessagesAPI(steps) as api:
        handle = await start_editor(hello_workspace, api, storage=tmp_path / "state")
        try:
            sid, path = await first_run(handle, hello_workspace)
            assert path.name == f"greet-politely-{sid[:4]}.md"
            version = (await handle.request("plansight/state", {}))["todos"]["version"]
            await file_says(
                path, expected_text(sid, version, ITEMS, "The greeting lives in hello.py.\n")
            )
            # The notes go to the model with the item (the todo result's rendered plan).
            assert "    Keep the exclamation mark." in json.dumps(api.bodies[1])
            # A rename keeps the file's name (the editor's tab, links) and changes its title.
            await handle.request("plansight/renameSession", {"id": sid, "title": "Be polite"})
            await wait_until(lambda: (read(path) or "").startswith("# Be polite\n"), "title")
            assert plan_file(hello_workspace, sid) == path
        finally:
            await handle.stop()


async def test_a_plain_save_becomes_the_plan_the_clients_and_the_model_see(
    hello_workspace: Path, tmp_path: Path
) -> None:
    steps = [tool("todo", PLAN), text("Planned."), text("Carrying on.")]
    with FakeMessagesAPI(steps) as api:
        handle = await start_editor(hello_workspace, api, storage=tmp_path / "state")
        try:
            sid, path = await first_run(handle, hello_workspace)
            version = (await handle.request("plansight/state", {}))["todos"]["version"]
            await file_says(path, expected_text(sid, version, ITEMS))
            recorder = handle.recorder
            heard = len(recorder.todos)
            saved = expected_text(
                sid,
                version,
                "- [x] 1. Read the greeting\n"
                "- [~] 2. Make it very polite\n"
                "  Keep the exclamation mark.\n"
                "  Say please.\n"
                "- [ ] Update the docs\n"
                "- [-] 3. Run the tests\n",
                "Ask before pushing.\n",
            )
            with open(path, "w", encoding="utf-8") as out:  # any editor, any program
                out.write(saved)
            await recorder.wait_for(lambda: len(recorder.todos) > heard, what="todos")
            todos = recorder.todos[-1]
            assert todos["source"] == "user" and todos["sessionId"] == sid
            assert [(i["id"], i["text"], i["status"]) for i in todos["items"]] == [
                ("1", "Read the greeting", "completed"),
                ("2", "Make it very polite", "in_progress"),
                ("4", "Update the docs", "pending"),  # the lowest id no item uses
                ("3", "Run the tests", "cancelled"),
            ]
            assert todos["items"][1]["notes"] == "Keep the exclamation mark.\nSay please."
            await recorder.wait_for(
                lambda: recorder.scratchpad[-1:] == ["Ask before pushing."], what="scratchpad"
            )
            # Written again from the plan, with its new version.
            new_version = todos["version"]
            await wait_until(
                lambda: f"version {new_version} -->" in (read(path) or ""), "the rewrite"
            )
            assert "- [ ] 4. Update the docs\n" in (read(path) or "")
            # The model hears of it in the words of a user's plan edit, notes included.
            await handle.request("plansight/run", {"prompt": "Go on"})
            told = json.dumps(api.bodies[-1])
            assert "The user edited your plan" in told
            assert "[ ] #4: Update the docs" in told and "    Say please." in told
            assert "The user edited your scratchpad" in told and "Ask before pushing." in told
        finally:
            await handle.stop()


async def test_a_save_against_an_older_version_is_merged_per_item(
    hello_workspace: Path, tmp_path: Path
) -> None:
    with FakeMessagesAPI([tool("todo", PLAN), text("Planned.")]) as api:
        handle = await start_editor(hello_workspace, api, storage=tmp_path / "state")
        try:
            sid, path = await first_run(handle, hello_workspace)
            state = (await handle.request("plansight/state", {}))["todos"]
            await file_says(path, expected_text(sid, state["version"], ITEMS))
            stale = read(path)
            assert stale is not None
            # Meanwhile the plan changes: #1 reworded, #3 completed (the other side).
            items = [dict(i) for i in state["items"]]
            items[0]["text"] = "Read hello.py"
            items[2]["status"] = "completed"
            items[1]["text"] = "Make it kind"
            await handle.request("plansight/editPlan", {"items": items})
            await wait_until(lambda: read(path) != stale, "the rewrite")
            heard = len(handle.recorder.todos)
            # The user saves their copy of the older version: #2 changed (on both sides) and
            # #3 left as it was.
            with open(path, "w", encoding="utf-8") as out:
                out.write(stale.replace("2. Make it polite", "2. Make it polite, please"))
            await handle.recorder.wait_for(lambda: len(handle.recorder.todos) > heard)
            merged = handle.recorder.todos[-1]["items"]
            assert [(i["id"], i["text"], i["status"]) for i in merged] == [
                ("1", "Read hello.py", "completed"),  # changed on the plan's side only
                ("2", "Make it polite, please", "in_progress"),  # both: the user's wins
                ("3", "Run the tests", "completed"),  # changed on the plan's side only
            ]
        finally:
            await handle.stop()


async def test_a_broken_save_is_shown_on_its_line_and_never_lost(
    hello_workspace: Path, tmp_path: Path
) -> None:
    with FakeMessagesAPI([tool("todo", PLAN), text("Planned.")]) as api:
        handle = await start_editor(hello_workspace, api, storage=tmp_path / "state")
        try:
            sid, path = await first_run(handle, hello_workspace)
            before = (await handle.request("plansight/state", {}))["todos"]
            await file_says(path, expected_text(sid, before["version"], ITEMS))
            broken = (read(path) or "").replace("- [ ] 3. Run", "Run")
            path.write_text(broken, encoding="utf-8")
            uri = handle.uri(str(path.relative_to(hello_workspace)))
            recorder = handle.recorder
            await recorder.wait_for(lambda: any(u == uri and d for u, d in recorder.diagnostics))
            [diagnostic] = next(d for u, d in recorder.diagnostics if u == uri and d)
            assert diagnostic.source == "plansight" and diagnostic.code == "plan-file"
            assert diagnostic.range.start.line == broken.splitlines().index("Run the tests")
            assert ".rejected.md" in diagnostic.message
            kept = path.with_name(path.name.replace(".md", ".rejected.md"))
            assert read(kept) == broken  # nothing lost
            assert (await handle.request("plansight/state", {}))["todos"] == before
            assert read(path) == broken  # left as the user saved it until the plan changes
            # The plan's next change writes the file from the plan again.
            await handle.request("plansight/editPlan", {"items": PLAN["items"][:2]})
            await wait_until(lambda: "Run the tests" not in (read(path) or ""), "the rewrite")
            # A good save clears the diagnostic.
            path.write_text((read(path) or "") + "More notes.\n", encoding="utf-8")
            await recorder.wait_for(lambda: recorder.diagnostics[-1] == (uri, []))
        finally:
            await handle.stop()


async def test_a_deleted_plan_file_is_written_again(hello_workspace: Path, tmp_path: Path) -> None:
    with FakeMessagesAPI([tool("todo", PLAN), text("Planned.")]) as api:
        handle = await start_editor(hello_workspace, api, storage=tmp_path / "state")
        try:
            _sid, path = await first_run(handle, hello_workspace)
            await wait_until(lambda: "Run the tests" in (read(path) or ""), "the file")
            written = read(path)
            path.unlink()
            await wait_until(lambda: read(path) == written, "the file written again")
        finally:
            await handle.stop()


async def test_a_plan_file_replaced_by_a_link_is_never_read_through_it(
    hello_workspace: Path, tmp_path: Path
) -> None:
    """A link in the plans folder (a cloned repository's, or put there while the server ran)
    pointing at a secret outside the workspace: the server never reads through it (had it, the
    secret would have been kept as `.rejected.md` in the workspace, where the model reads), and
    writes the plan there again as a file of its own, the secret untouched."""
    secret = tmp_path / "outside" / "id_ed25519"
    secret.parent.mkdir()
    canary = "CANARY-PLANFILE-LINK-4f1c9a"
    secret.write_text(f"-----BEGIN OPENSSH PRIVATE KEY-----\n{canary}\n", encoding="utf-8")
    with FakeMessagesAPI([tool("todo", PLAN), text("Planned.")]) as api:
        handle = await start_editor(hello_workspace, api, storage=tmp_path / "state")
        try:
            _sid, path = await first_run(handle, hello_workspace)
            await wait_until(lambda: "Run the tests" in (read(path) or ""), "the file")
            written = read(path)
            path.unlink()
            path.symlink_to(secret)
            await wait_until(
                lambda: not path.is_symlink() and read(path) == written, "the plan written again"
            )
            assert secret.read_text(encoding="utf-8").count(canary) == 1
            for kept in path.parent.iterdir():
                assert canary not in kept.read_text(encoding="utf-8", errors="replace"), kept
            state = await handle.request("plansight/state", {})
            assert canary not in json.dumps(state)
        finally:
            await handle.stop()


async def test_a_save_and_the_models_todo_at_once_lose_nothing(
    hello_workspace: Path, tmp_path: Path
) -> None:
    moved = [dict(i) for i in PLAN["items"]]
    moved[1]["status"], moved[2]["status"] = "completed", "in_progress"
    # The model's next todo streams slowly (its view of the plan is the one before the save);
    # the user saves the file while it streams. Whichever reaches the plan first, both
    # changes end up in it: a save first is merged into the model's update (plan.py), a save
    # after it (against the older version) is merged per item (planfiles.py).
    steps = [
        tool("todo", PLAN),
        text("Planned."),
        text("The rest comes next."),  # the done gate's answer (open items)
        tool("todo", {"items": moved}, text="Moving on.", chunk_delay=0.1),
        text("Done."),
        text("Still open, on purpose."),
    ]
    with FakeMessagesAPI(steps) as api:
        handle = await start_editor(hello_workspace, api, storage=tmp_path / "state")
        try:
            sid, path = await first_run(handle, hello_workspace)
            state = (await handle.request("plansight/state", {}))["todos"]
            await file_says(path, expected_text(sid, state["version"], ITEMS))
            saved = (read(path) or "").replace("1. Read the greeting", "1. Read it twice")
            recorder = handle.recorder
            seen = len(recorder.events)
            _, running = handle.start_request("plansight/run", {"prompt": "Go on"})
            await recorder.wait_for(
                lambda: any(e["type"] == "textDelta" for e in recorder.events[seen:]),
                what="the model's turn streaming",
            )
            path.write_text(saved, encoding="utf-8")
            await asyncio.wait_for(running, 60)

            async def both() -> bool:
                now = (await handle.request("plansight/state", {}))["todos"]["items"]
                return [(i["text"], i["status"]) for i in now] == [
                    ("Read it twice", "completed"),
                    ("Make it polite", "completed"),
                    ("Run the tests", "in_progress"),
                ]

            await wait_until(both, "both changes in the plan")
            await wait_until(
                lambda: (
                    "1. Read it twice" in (read(path) or "")
                    and "- [~] 3. Run the tests" in (read(path) or "")
                ),
                "both in the file",
            )
            assert "Keep the exclamation mark." in (read(path) or "")  # the notes kept too
        finally:
            await handle.stop()


async def test_the_file_tools_refuse_the_plan_file(hello_workspace: Path, tmp_path: Path) -> None:
    steps = [tool("todo", PLAN), text("Planned.")]
    with FakeMessagesAPI(steps) as api:
        handle = await start_editor(
            hello_workspace,
            api,
            storage=tmp_path / "state",
            init_options={"autoApprove": {"edits": True}},
        )
        try:
            _sid, path = await first_run(handle, hello_workspace)
            await wait_until(lambda: "Run the tests" in (read(path) or ""), "the file")
            written = read(path)
            relative = str(path.relative_to(hello_workspace))
            api.push(
                tool("read_file", {"path": relative}),
                tool("write_file", {"path": relative, "content": "- [x] 1. All done\n"}),
                text("I see."),
            )
            reviews = len(handle.recorder.reviews)
            await handle.request("plansight/run", {"prompt": "Mark it all done"})
            read_result = _tool_result(api.bodies[-1], "read_file")
            assert read_result.get("is_error") is not True and "Make it polite" in json.dumps(
                read_result
            )
            refused = _tool_result(api.bodies[-1], "write_file")
            assert refused["is_error"] is True
            assert "use the todo tool" in json.dumps(refused)
            assert read(path) == written and len(handle.recorder.reviews) == reviews
        finally:
            await handle.stop()


async def test_plans_directory_outside_the_workspace_is_refused(
    hello_workspace: Path, tmp_path: Path
) -> None:
    outside = tmp_path / "elsewhere"
    with FakeMessagesAPI([tool("todo", PLAN), text("Planned.")]) as api:
        handle = await start_editor(
            hello_workspace,
            api,
            storage=tmp_path / "state",
            init_options={"plansDirectory": "../elsewhere"},
        )
        try:
            await handle.request("plansight/run", {"prompt": "Greet"})
            await handle.recorder.wait_for(
                lambda: any("outside the workspace" in str(m) for m in _logs(handle))
            )
            await handle.request("plansight/editPlan", {"items": PLAN["items"]})
            assert not outside.exists()
            assert not (hello_workspace / ".plansight").exists()
        finally:
            await handle.stop()


def _logs(handle: EditorHandle) -> list[Any]:
    return [m.message for m in handle.client.log_messages]


def _tool_result(body: dict[str, Any], name: str) -> dict[str, Any]:
    """The result of the last call of tool `name` in the conversation a request carried."""
    blocks = [b for m in body["messages"] if isinstance(m["content"], list) for b in m["content"]]
    [*_, called] = [b["id"] for b in blocks if b.get("type") == "tool_use" and b["name"] == name]
    [result] = [b for b in blocks if b.get("type") == "tool_result" and b["tool_use_id"] == called]
    return dict(result)


@pytest.mark.skipif(shutil.which("nvim") is None, reason="nvim is not installed")
async def test_a_save_by_neovim_is_read_back(hello_workspace: Path, tmp_path: Path) -> None:
    with FakeMessagesAPI([tool("todo", PLAN), text("Planned.")]) as api:
        handle = await start_editor(hello_workspace, api, storage=tmp_path / "state")
        try:
            sid, path = await first_run(handle, hello_workspace)
            version = (await handle.request("plansight/state", {}))["todos"]["version"]
            await file_says(path, expected_text(sid, version, ITEMS))
            heard = len(handle.recorder.todos)
            # A real editor's save (`:w`: Neovim's own way of writing, backup and all), from
            # its normal-mode edits.
            done = await asyncio.create_subprocess_exec(
                "nvim",
                "--headless",
                "--clean",
                "-c",
                "/3. Run the tests",
                "-c",
                "normal! 0f[lrx",
                "-c",
                "normal! o  Also the linter.",
                "-c",
                "wq",
                str(path),
                stdin=asyncio.subprocess.DEVNULL,
                stdout=asyncio.subprocess.DEVNULL,
                stderr=asyncio.subprocess.PIPE,
                env={**os.environ, "HOME": str(tmp_path)},
            )
            _, errors = await asyncio.wait_for(done.communicate(), 60)
            assert done.returncode == 0, errors
            await handle.recorder.wait_for(lambda: len(handle.recorder.todos) > heard)
            [*_, last] = handle.recorder.todos[-1]["items"]
            assert (last["text"], last["status"]) == ("Run the tests", "completed")
            assert last["notes"] == "Also the linter."
        finally:
            await handle.stop()
