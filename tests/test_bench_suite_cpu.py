"""bench/suite_cpu.py: each Python process records its CPU as it ends, however it ends."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import sysconfig
from pathlib import Path

from bench.suite_cpu import LOG_VARIABLE, PTH_NAME, Kind, hook_line, report, tally


def run_recorded(tmp_path: Path, *args: str) -> list[list[object]]:
    """`args` run by the Python of a fresh environment holding the bench's `.pth` hook."""
    venv = tmp_path / "venv"
    if not venv.exists():
        subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
        purelib = sysconfig.get_paths(vars={"base": str(venv), "platbase": str(venv)})["purelib"]
        (Path(purelib) / PTH_NAME).write_text(hook_line())
    log = tmp_path / "log.jsonl"
    env = dict(os.environ, **{LOG_VARIABLE: str(log)})
    subprocess.run([str(venv / "bin" / "python"), *args], env=env, check=False, timeout=60)
    records = [json.loads(line) for line in log.read_text().splitlines()]
    log.unlink()
    return records


def test_a_process_ending_at_os_exit_is_recorded_once(tmp_path: Path) -> None:
    (record,) = run_recorded(tmp_path, "-c", "import os; sum(range(10**6)); os._exit(3)")
    kind, cpu, imported_sdk = record
    assert kind == "other Python" and isinstance(cpu, float) and cpu > 0
    assert imported_sdk is False


def test_a_plansight_command_is_named_by_its_sub_command(tmp_path: Path) -> None:
    script = tmp_path / "plansight"
    script.write_text("import sys\nsys.exit(0)\n")  # a console script's name and arguments
    (record,) = run_recorded(tmp_path, str(script), "lsp")
    assert record[0] == "plansight lsp"
    (record,) = run_recorded(tmp_path, "-c", "pass")
    assert record[0] == "other Python"
    (record,) = run_recorded(tmp_path, "-c", "pass", "lsp")  # as eval/attempt.py starts one
    assert record[0] == "plansight lsp"


def test_without_the_log_named_nothing_is_recorded(tmp_path: Path) -> None:
    run_recorded(tmp_path, "-c", "pass")  # makes the environment
    env = {k: v for k, v in os.environ.items() if k != LOG_VARIABLE}
    done = subprocess.run(
        [str(tmp_path / "venv" / "bin" / "python"), "-c", "print('quiet')"],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    assert (done.stdout, done.stderr) == ("quiet\n", "")


def test_the_tally_groups_the_client_commands_and_the_floor_leaves_out_the_servers() -> None:
    lines = [
        json.dumps(["plansight lsp", 2.0, True]),
        json.dumps(["plansight lsp", 1.0, False]),
        json.dumps(["plansight run", 0.5, False]),
        json.dumps(["plansight demo", 0.5, True]),
    ]
    kinds = tally(lines)
    assert kinds == [
        Kind("plansight lsp", 2, 3.0, 1),
        Kind("plansight (the terminal client, demo, eval …)", 2, 1.0, 1),
    ]
    shown = report(kinds, total_cpu=6.0, wall=4.0, cores=2)
    assert "the rest (git, node, bwrap, killed processes)" in shown and "2.0s" in shown
    assert shown.endswith("without any server: 3.0 s CPU, so at least 1.5 s wall on 2 cores")
