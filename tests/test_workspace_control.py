"""workspace/control.py: which paths are control files, and the file tools' side of them
(workspace/access.py's `begin_edit`: `.git` refused, a control edit marked)."""

from __future__ import annotations

from pathlib import Path

import pytest

from plansight.workspace.access import ControlFileError, Workspace
from plansight.workspace.control import ControlFiles, is_git_internal
from plansight.workspace.secrets import ProtectedPaths, ProtectOptions

CONTROL = [
    ".git",
    ".git/config",
    ".git/hooks/pre-commit",
    "vendor/lib/.git/config",  # a nested repository's
    ".GIT/hooks/post-checkout",  # as a case-insensitive file system reads it
    ".VSCode/settings.json",
    ".gitmodules",
    ".plansightignore",
    ".plansight/plans/x.md",
    ".mcp.json",
    ".vscode/settings.json",
    ".vscode/tasks.json",
    "sub/.vscode/launch.json",
    ".idea/workspace.xml",
    ".zed/settings.json",
    ".devcontainer/devcontainer.json",
    ".envrc",
    "app/.envrc",
]
NOT_CONTROL = [
    "src/main.py",
    ".gitignore",
    ".github/workflows/ci.yml",
    "git/config",
    "docs/.vscode.md",
    "mcp.json",
    "envrc",
    "README.md",
]


@pytest.mark.parametrize("path", CONTROL)
def test_control_files(tmp_path: Path, path: str) -> None:
    assert ControlFiles(tmp_path).is_control(path)


@pytest.mark.parametrize("path", NOT_CONTROL)
def test_not_control_files(tmp_path: Path, path: str) -> None:
    assert not ControlFiles(tmp_path).is_control(path)


def test_the_user_adds_patterns_and_cannot_take_the_defaults_away(tmp_path: Path) -> None:
    control = ControlFiles(tmp_path, ("Makefile", "scripts/hooks/", "!.vscode/"))
    assert control.is_control("Makefile") and control.is_control("scripts/hooks/pre-push")
    assert control.is_control(".vscode/settings.json")  # the defaults are a list of their own
    assert control.patterns()[-3:] == ["Makefile", "scripts/hooks/", "!.vscode/"]


def test_only_git_folders_are_git_internal() -> None:
    assert is_git_internal(".git/config") and is_git_internal("a/.git")
    assert not is_git_internal(".gitmodules") and not is_git_internal(".github/x")


def test_present_lists_the_outermost_control_paths(tmp_path: Path) -> None:
    (tmp_path / ".git" / "hooks").mkdir(parents=True)
    (tmp_path / ".vscode").mkdir()
    (tmp_path / ".vscode" / "settings.json").write_text("{}")
    (tmp_path / "app").mkdir()
    (tmp_path / "app" / ".envrc").write_text("")
    (tmp_path / "app" / "main.py").write_text("")
    found = {(p.relative_to(tmp_path).as_posix(), d) for p, d in ControlFiles(tmp_path).present()}
    assert found == {(".git", True), (".vscode", True), ("app/.envrc", False)}


async def test_begin_edit_refuses_git_and_marks_control_files(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    (tmp_path / "cfg").symlink_to(".vscode", target_is_directory=True)
    (tmp_path / ".vscode").mkdir()
    (tmp_path / "gitlink").symlink_to(".git", target_is_directory=True)
    workspace = Workspace(
        tmp_path, protected=ProtectedPaths(tmp_path, ProtectOptions(control=("Makefile",)))
    )
    for path in (".git/hooks/pre-commit", ".git/config", "gitlink/config", "sub/.git/HEAD"):
        with pytest.raises(ControlFileError, match="git folder"):
            await workspace.begin_edit(path)
    assert (await workspace.begin_edit(".vscode/settings.json")).control
    assert (await workspace.begin_edit("cfg/settings.json")).control  # by its target
    assert (await workspace.begin_edit("Makefile")).control  # the user's protect.control
    assert not (await workspace.begin_edit("src/app.py")).control
