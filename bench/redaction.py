"""What withholding secret values costs (workspace/secretvalues.py; PROTOCOL.md version 4: at
most 5 ms per MB of text at the median).

The known values: a workspace's `.env` of ten settings (seven secret: URL-safe and hex tokens, a
password, a DSN) and the server's API key, 36 forms with their base64 ones; a second set adds a
25-line private key (136 forms). Each text is 1 MB, withheld 21 times: Plansight's own sources
(code), its git history with patches (diffs), a service's log lines and a test run's output
(logs). Base64 and hex dumps are shown for reference: their every character may begin a value,
they are the worst case. A 50 MB command output end to end (the bash tool, with and without
the values withheld; the output is capped, so the text withheld is 30 kB), and one 50 MB text
withheld in one call. And the walk for protected files that follows every command, on a
20,000-file workspace with a 2,000-file `node_modules/`.
"""

from __future__ import annotations

import base64
import random
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

from bench.table import Row, ms, p50_p90
from bench.workspaces import large_tree
from plansight.engine.events import EventBus
from plansight.engine.hooks import accept_all_edits, approve_all_commands
from plansight.plan.plan import Plan
from plansight.plan.scratchpad import Scratchpad
from plansight.tools import default_tools
from plansight.tools.context import ToolContext
from plansight.workspace.access import Workspace
from plansight.workspace.sandbox import CommandSandbox, SandboxOptions
from plansight.workspace.secrets import ProtectedPaths
from plansight.workspace.secretvalues import Redactor, SecretValues

MB = 1_000_000
ROUNDS = 21
COMMAND_ROUNDS = 11
GOAL = 0.005  # seconds per MB at the median
REPO = Path(__file__).resolve().parent.parent


def _env_file(rng: random.Random) -> str:
    def token(alphabet: str, size: int) -> str:
        return "".join(rng.choice(alphabet) for _ in range(size))

    urlsafe = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
    hexdigits = "0123456789abcdef"
    return "\n".join(
        [
            "DEBUG=false",
            "HOST=db.internal.example.com",
            f"API_KEY={token(urlsafe, 40)}",
            "DB_PASSWORD=correct-horse-battery9",
            f"STRIPE_SECRET=sk_live_{token(hexdigits, 40)}",
            f"SESSION_TOKEN={token(hexdigits, 64)}",
            f"AWS_SECRET_ACCESS_KEY={token(urlsafe, 40)}",
            f"GITHUB_TOKEN=ghp_{token(urlsafe, 36)}",
            f"SENTRY_DSN=https://{token(hexdigits, 32)}@o1.ingest.sentry.io/1",
            f"JWT_SECRET={token(urlsafe, 64)}",
        ]
    )


def _key_file(rng: random.Random) -> str:
    lines = [base64.b64encode(rng.randbytes(48)).decode() for _ in range(25)]
    return (
        "-----BEGIN RSA PRIVATE KEY-----\n" + "\n".join(lines) + "\n-----END RSA PRIVATE KEY-----\n"
    )


def _one_mb(parts: list[str]) -> str:
    text = "".join(parts)
    while len(text) < MB:
        text += text
    return text[:MB]


def _texts(rng: random.Random) -> dict[str, str]:
    sources = sorted((REPO / "server" / "plansight").rglob("*.py"))
    code = _one_mb([path.read_text() for path in sources])
    try:
        history = subprocess.run(
            ["git", "log", "-p", "-n", "400"],
            cwd=REPO,
            capture_output=True,
            text=True,
            errors="replace",
            timeout=60,
        ).stdout
    except (OSError, subprocess.SubprocessError):
        history = ""
    logs = [
        f"2026-12-02 07:55:{i % 60:02d}.{i % 1000:03d} INFO  req={rng.randrange(10**8):08x} "
        f"GET /api/v1/items/{i} status=200 in {rng.randrange(1, 900)} ms\n"
        if i % 7
        else f"tests/test_mod_{i % 40}.py::test_case_{i} PASSED{' ' * (i % 9)}[{i % 100:3d}%]\n"
        for i in range(12_000)
    ]
    texts = {"code (Plansight's sources)": code, "logs and a test run": _one_mb(logs)}
    if history:
        texts["diffs (git log -p)"] = _one_mb([history])
    texts["base64 dump (reference, worst case)"] = base64.encodebytes(
        rng.randbytes(740_000)
    ).decode()
    texts["hex dump (reference, worst case)"] = rng.randbytes(MB // 2).hex()
    return texts


def _median_per_mb(redactor: Redactor, text: str) -> tuple[float, list[float], float]:
    """The CPU time per MB (the thread's own: on a shared machine the wall clock also counts
    other processes' turns): median, all, and the wall clock's median for reference."""
    times: list[float] = []
    walls: list[float] = []
    for _ in range(ROUNDS):
        wall, started = time.perf_counter(), time.thread_time()
        redactor.redact(text)
        times.append(time.thread_time() - started)
        walls.append(time.perf_counter() - wall)
    per_mb = [t * MB / len(text) for t in times]
    return statistics.median(per_mb), per_mb, statistics.median(walls) * MB / len(text)


def _context(root: Path, secrets: SecretValues | None) -> ToolContext:
    workspace = Workspace(root)
    return ToolContext(
        plan=Plan(),
        scratchpad=Scratchpad(),
        workspace=workspace,
        review=accept_all_edits,
        approve=approve_all_commands,
        events=EventBus(),
        sandbox=CommandSandbox(root, SandboxOptions(enabled=False), protected=workspace.protected),
        secrets=secrets,
    )


async def run() -> list[Row]:
    rng = random.Random(27)
    rows: list[Row] = []
    with tempfile.TemporaryDirectory(prefix="plansight-bench-redaction-") as tmp:
        root = Path(tmp)
        (root / ".env").write_text(_env_file(rng))
        env = {
            "ANTHROPIC_API_KEY": "sk-ant-api03-"
            + base64.urlsafe_b64encode(rng.randbytes(70)).decode()
        }
        values = SecretValues(ProtectedPaths(root), env=env)
        redactor = values.redactor()
        (root / "deploy.pem").write_text(_key_file(rng))
        values.mark_stale()
        with_key = values.redactor()
        texts = _texts(rng)
        typical: list[float] = []
        for name, text in texts.items():
            median, per_mb, wall = _median_per_mb(redactor, text)
            reference = "reference" in name
            if not reference:
                typical += per_mb
            forms = f"{redactor.count} forms; " if not rows else ""
            rows.append(
                Row(
                    "redaction",
                    f"withhold, {name}: CPU per MB",
                    p50_p90(per_mb),
                    goal="" if reference else f"p50 ≤ {ms(GOAL)}",
                    met=None if reference else median <= GOAL,
                    note=f"{forms}wall clock p50 {ms(wall)}",
                )
            )
        median, per_mb, wall = _median_per_mb(with_key, texts["code (Plansight's sources)"])
        rows.append(
            Row(
                "redaction",
                "withhold, code, a 25-line private key known too: CPU per MB",
                p50_p90(per_mb),
                note=f"{with_key.count} forms; wall clock p50 {ms(wall)}",
            )
        )
        rows.insert(
            0,
            Row(
                "redaction",
                "withhold, typical text (code, diffs, logs): CPU per MB",
                p50_p90(typical),
                goal=f"p50 ≤ {ms(GOAL)}",
                met=statistics.median(typical) <= GOAL,
                note=f"{len(typical)} runs over {len(texts) - 2} texts of 1 MB",
            ),
        )

        big = _one_mb([texts["code (Plansight's sources)"]]) * 50
        started = time.perf_counter()
        redactor.redact(big)
        rows.append(
            Row(
                "redaction", "withhold 50 MB of text in one call", ms(time.perf_counter() - started)
            )
        )
        rows += await _command_rows(root, values, big)
    rows += _walk_rows()
    return rows


async def _command_rows(root: Path, values: SecretValues, big: str) -> list[Row]:
    (root / "big.txt").write_text(big)
    tools = default_tools()
    withheld, plain = _context(root, values), _context(root, None)
    command = {"command": "cat big.txt"}
    with_values: list[float] = []
    without: list[float] = []
    for _ in range(COMMAND_ROUNDS):
        for ctx, into in ((withheld, with_values), (plain, without)):
            started = time.perf_counter()
            outcome = await tools.call(ctx, "bash", command)
            into.append(time.perf_counter() - started)
            assert not outcome.is_error, outcome.content
    extra = statistics.median(with_values) - statistics.median(without)
    return [
        Row(
            "redaction",
            "50 MB command output, bash tool end to end: withheld / not",
            f"p50 {ms(statistics.median(with_values))} / {ms(statistics.median(without))}",
            note=f"difference {ms(extra)} (the walk for protected files after the command and "
            f"the capped 30 kB withheld); {COMMAND_ROUNDS} rounds each, alternated",
        )
    ]


def _walk_rows() -> list[Row]:
    return [*_walks(2_000), *_walks(20_000)]


def _walks(files: int) -> list[Row]:
    with tempfile.TemporaryDirectory(prefix="plansight-bench-redaction-walk-") as tmp:
        root = Path(tmp)
        large_tree(root, files)
        modules = root / "node_modules"
        for i in range(files // 10):
            folder = modules / f"pkg_{i // 100:02d}"
            folder.mkdir(parents=True, exist_ok=True)
            (folder / f"index_{i}.js").write_text("module.exports = {}\n")
        (modules / "pkg_00" / ".env").write_text("API_KEY=copied-into-node-modules\n")
        values = SecretValues(ProtectedPaths(root), env={})
        walks: list[float] = []  # CPU time (the machine is shared), wall clock in the notes
        light: list[float] = []
        walls: dict[str, list[float]] = {"full": [], "light": []}
        stats: list[float] = []
        for _ in range(7):
            for mark, into, kind in (
                (values.mark_stale, walks, "full"),
                (values.mark_changed, light, "light"),
            ):
                mark()
                wall, started = time.perf_counter(), time.thread_time()
                values.refresh()
                into.append(time.thread_time() - started)
                walls[kind].append(time.perf_counter() - wall)
            started = time.perf_counter()
            values.refresh()
            stats.append(time.perf_counter() - started)
        assert "copied-into-node-modules" not in values.withhold("copied-into-node-modules")
    total = files + files // 20 + files // 10  # large_tree's build/ folder, node_modules/
    rows = [
        Row(
            "redaction",
            f"full walk for protected files as a run starts ({total:,} files): CPU",
            p50_p90(walks),
            note=f"node_modules/ included; in a thread, before the run's first request; wall "
            f"clock p50 {ms(statistics.median(walls['full']))}",
        ),
        Row(
            "redaction",
            f"walk after a command or MCP call ({total:,} files, node_modules/ not walked): CPU",
            p50_p90(light),
            note="in a thread; the command's result waits for it; wall clock p50 "
            f"{ms(statistics.median(walls['light']))}",
        ),
    ]
    if files > 2_000:
        rows.append(Row("redaction", "known files' stat, any other tool result", p50_p90(stats)))
    return rows
