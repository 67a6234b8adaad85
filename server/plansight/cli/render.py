"""Pure rendering helpers: protocol payloads (plain dicts) in, rich `Text` or `str` out.

Nothing here prints or keeps state, so the terminal UI and the tests share one rendering.
All text goes through `Text` objects, never console markup: a plan line such as
`[x] #1: Add type hints` must not be read as a markup tag.

Whatever comes from the model, a file or a command is shown with its control characters made
visible (`visible`, `visible_text`: `ESC[2J` shows as `^[[2J`, newlines and tabs stay what they
are), so nothing it holds can clear the screen, recolour the session or move the cursor under
the live region.

What the server computes is shown as it sends it, never computed again: the plan's counts
(`TodoState.counts`: "2/5" is items done, completed or cancelled, of all) and its item in
progress (`current`), a tool call's one-line summary (`toolCall.summary`) and the whole input of
a run (`usage.totalInputTokens`). For an older server that does not send them, each has one
fallback here, by the server's own rule (`plansight.protocol.names`).
"""

from __future__ import annotations

import difflib
import json
import re
import shlex
from collections.abc import Iterable, Mapping
from types import MappingProxyType
from typing import Any, ClassVar

from rich.console import Console, ConsoleOptions, RenderResult
from rich.markdown import Heading, Markdown, MarkdownElement
from rich.segment import Segment
from rich.text import Text

from plansight.plan.text import TODO_MARKERS
from plansight.protocol.names import plain_input_summary, plan_counts

MARKS: Mapping[str, str] = TODO_MARKERS
STATUS_STYLES: Mapping[str, str] = MappingProxyType(
    {
        "pending": "",
        "in_progress": "bold yellow",
        "completed": "green",
        "cancelled": "dim strike",
        "failed": "bold red",
    }
)
RESULT_STYLES: Mapping[str, str] = MappingProxyType(
    {
        "done": "bold green",
        "cancelled": "bold yellow",
        "error": "bold red",
        "limit": "bold red",
        "refused": "bold red",
    }
)
EXIT_CODES: Mapping[str, int] = MappingProxyType(
    {"done": 0, "cancelled": 130, "error": 1, "limit": 1, "refused": 1}
)
STRATEGY_WORDS: Mapping[str, str] = MappingProxyType(
    {
        "clearToolResults": "old tool results cleared",
        "summary": "earlier turns summarized",
    }
)
MAX_DETAIL = 100


# C0 controls but newline and tab, DEL and the C1 controls (a lone CSI, U+009B, is an escape
# sequence's start to many terminals); a carriage return before a newline is a line end.
CONTROL_CHARACTERS = re.compile(r"\r\n|[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def _visible_char(match: re.Match[str]) -> str:
    char = match.group()
    if char == "\r\n":
        return "\n"
    code = ord(char)
    if code < 0x20:
        return "^" + chr(code + 0x40)  # caret notation, as `cat -v` shows it: ESC is ^[
    return "^?" if code == 0x7F else f"\\x{code:02x}"


def visible(text: str) -> str:
    """`text` with its control characters shown, not obeyed: `ESC[2J` becomes `^[[2J`."""
    return CONTROL_CHARACTERS.sub(_visible_char, text)


def visible_text(text: Text) -> Text:
    """A `Text` whose plain string may hold control characters, with them made visible and
    its styles kept on the same characters."""
    plain = text.plain
    if not CONTROL_CHARACTERS.search(plain):
        return text
    # Where each character of `plain` starts in the shown string (and where it ends).
    starts: list[int] = []
    shown: list[str] = []
    position = 0
    for char in plain:
        starts.append(position)
        part = visible(char) if char != "\r" else "^M"
        shown.append(part)
        position += len(part)
    starts.append(position)
    out = Text(
        "".join(shown),
        style=text.style,
        justify=text.justify,
        overflow=text.overflow,
        no_wrap=text.no_wrap,
        end=text.end,
    )
    for span in text.spans:
        out.stylize(span.style, starts[span.start], starts[min(span.end, len(plain))])
    return out


def exit_code(status: str) -> int:
    """0 for done, 130 for cancelled, 1 for error, limit and anything unknown."""
    return EXIT_CODES.get(status, 1)


def shorten(text: str, limit: int = MAX_DETAIL) -> str:
    """One line of at most `limit` characters."""
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


# Plan -------------------------------------------------------------------------------------


def plan_items(state: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    items = state.get("items")
    return [i for i in items if isinstance(i, Mapping)] if isinstance(items, list) else []


def counts(state: Mapping[str, Any]) -> Mapping[str, int]:
    """`TodoState.counts` as the server sent it, else counted from the items by its rule."""
    sent = state.get("counts")
    if isinstance(sent, Mapping) and all(isinstance(sent.get(k), int) for k in ("done", "total")):
        return sent
    return plan_counts(str(item.get("status")) for item in plan_items(state))


def current_item(state: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """`TodoState.current` (the item in progress) as sent, else found in the items."""
    if "current" in state:
        current = state.get("current")
        return current if isinstance(current, Mapping) else None
    return next((i for i in plan_items(state) if i.get("status") == "in_progress"), None)


def count_text(state: Mapping[str, Any]) -> str:
    """`2/5`: the items done (completed or cancelled) of all."""
    shown = counts(state)
    return f"{shown['done']}/{shown['total']}"


def count_detail(state: Mapping[str, Any]) -> str:
    """`2/5 done · 1 cancelled`: the count, and the cancelled items it includes."""
    cancelled = counts(state).get("cancelled", 0)
    return f"{count_text(state)} done" + (f" · {cancelled} cancelled" if cancelled else "")


def plan_text(state: Mapping[str, Any]) -> Text:
    """The plan as `TodoState.rendered` shows it, each line styled by its status."""
    items = plan_items(state)
    if not items:
        rendered = state.get("rendered")
        return Text(rendered if isinstance(rendered, str) and rendered else "(no plan yet)")
    text = Text()
    for item in items:
        status = str(item.get("status", "pending"))
        mark = MARKS.get(status, "[?]")
        text.append(
            f"{mark} #{item.get('id', '?')}: {item.get('text', '')}\n",
            style=STATUS_STYLES.get(status, ""),
        )
    text.append(f"({count_detail(state)})", style="dim")
    return text


def progress_line(state: Mapping[str, Any] | None) -> str:
    """`2/5 · Add docstrings`: the items done of all, and the item in progress."""
    if state is None or not plan_items(state):
        return "planning"
    current = current_item(state)
    shown = count_text(state)
    return f"{shown} · {current.get('text', '')}" if current is not None else shown


def activity_text(activity: str, elapsed: float) -> Text:
    """`waiting for the model… 3 s`: the seconds only once there is a second to show."""
    text = Text(visible(activity) + "…", style="blue")
    if elapsed >= 1:
        text.append(f" {int(elapsed)} s", style="dim")
    return text


def cost_text(usd: float) -> str:
    """`$0.0046` below a dollar (cents say nothing there), `$1.23` from one."""
    return f"${usd:.4f}" if usd < 1 else f"${usd:,.2f}"


def status_line(usage: Mapping[str, Any], mode: str, width: int) -> str:
    """`claude-sonnet-5-5 · act · 97% context left · $0.0046`: the last `usage` event's
    figures as the server computed them, made shorter to fit `width` (the words first, then the
    model's `claude-` prefix; what is still too long the caller crops)."""
    model = visible(str(usage.get("model") or ""))
    used, window = usage.get("contextUsed"), usage.get("contextWindow")
    left = ""
    if isinstance(used, int) and isinstance(window, int) and window > 0:
        left = f"{max(0, 100 - round(used * 100 / window))}%"
    cost = usage.get("costUsd")
    priced = cost_text(cost) if isinstance(cost, int | float) and cost >= 0 else ""
    line = ""
    for model_shown, left_shown in (
        (model, f"{left} context left"),
        (model, f"{left} left"),
        (re.sub(r"-\d{8}$", "", model.removeprefix("claude-")), f"{left} left"),
    ):
        parts = [model_shown, mode, left_shown if left else "", priced]
        line = " · ".join(part for part in parts if part)
        if len(line) <= width:
            break
    return line


CONTEXT_PARTS = (
    ("systemPrompt", "system prompt and tools"),
    ("conversation", "conversation"),
    ("toolResults", "tool results"),
)


def context_lines(usage: Mapping[str, Any]) -> list[str]:
    """`/context`: the last `usage` event's context used of the window, then what the request
    held (its `parts`, estimated by the server), one line each."""
    used, window = usage.get("contextUsed"), usage.get("contextWindow")
    if not isinstance(used, int) or not isinstance(window, int) or window <= 0:
        return ["No model turn yet in this session: the context fills as a run starts."]
    share = round(used * 100 / window)
    lines = [f"Context: {used:,} of {window:,} tokens ({share}%) at the last model turn"]
    parts = usage.get("parts")
    if isinstance(parts, dict):
        for key, label in CONTEXT_PARTS:
            value = parts.get(key)
            if isinstance(value, int):
                lines.append(f"  {label:<24} ≈ {value:,}")
    return lines


def model_lines(listed: Mapping[str, Any]) -> list[str]:
    """`/model`: `plansight/models`' answer, one model a line, `*` before the one in use (the
    one in use first said on its own when the list does not hold it)."""
    current = visible(str(listed.get("current") or ""))
    models = [m for m in listed.get("models") or [] if isinstance(m, dict)]
    lines = [f"Model: {current or 'unknown'}"]
    for model in models:
        ident = visible(str(model.get("id", "")))
        name = visible(str(model.get("displayName") or ""))
        mark = "*" if ident == current else " "
        lines.append(f"{mark} {ident}" + (f"  {name}" if name and name != ident else ""))
    if not models:
        lines.append("(the Models API listed none)")
    return lines


# Tools ------------------------------------------------------------------------------------


def call_summary(event: Mapping[str, Any]) -> str:
    """A `toolCall`'s one-line summary as its tool made it (`src/app.py:10-39`,
    `$ make test`), else (an older server) its input as the server shows a tool without one."""
    summary = event.get("summary")
    if isinstance(summary, str):
        return summary
    return plain_input_summary(event.get("input"))


def running_text(name: str, summary: str) -> str:
    """The activity while a tool runs: `running bash $ make test`."""
    return f"running {name}" + (f" {shorten(summary, 60)}" if summary else "")


def tool_call_line(name: str, summary: str) -> Text:
    """One line per tool call: `⚙ read_file hello.py`, `⚙ bash $ make test`."""
    text = Text("⚙ ", style="cyan")
    mcp = mcp_tool_parts(name)
    if mcp is not None:
        # An MCP server's tool: its own name, and which server it belongs to.
        text.append(mcp[1], style="bold cyan")
        text.append(f" (MCP {mcp[0]})", style="dim")
    else:
        text.append(name, style="bold cyan")
    if summary:
        text.append(" " + summary, style="cyan")
    return text


# A command's summary ends with its exit status (`… · exit code 1`, `… · killed by SIGKILL`).
FAILED_COMMAND = re.compile(r"(^|· )(exit code -?[1-9]\d*|killed by \S+)$")


def tool_result_line(name: str, is_error: bool, summary: str) -> Text:
    """`  ✓ summary`, `  ✗ summary` (errors in red), `  ! summary` (a command that failed)."""
    if name == "todo" and not is_error:
        summary = "plan updated"
    if is_error:
        text = Text("  ✗ ", style="bold red")
        text.append(shorten(summary) or f"{name} failed", style="red")
    elif FAILED_COMMAND.search(summary):
        # It ran, and its result is the model's to read, but the user should see it failed.
        text = Text("  ! ", style="bold yellow")
        text.append(shorten(summary), style="yellow")
    else:
        text = Text("  ✓ ", style="green")
        text.append(shorten(summary) or "ok", style="dim")
    return text


# Diffs ------------------------------------------------------------------------------------


def unified_diff(old_text: str, new_text: str, path: str, context: int = 3) -> str:
    """A unified diff of two whole documents (`old_text` empty for a new file)."""
    lines = difflib.unified_diff(
        old_text.splitlines(keepends=True),
        new_text.splitlines(keepends=True),
        fromfile="/dev/null" if not old_text else f"a/{path}",
        tofile=f"b/{path}",
        n=context,
    )
    out: list[str] = []
    for line in lines:
        out.append(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n")
    return "".join(out)


def snippet_diff(old_text: str, new_text: str) -> str:
    """The lines an `edit_file` call replaces (`-`) and writes (`+`), with one line of context."""
    lines = difflib.unified_diff(old_text.splitlines(), new_text.splitlines(), n=1, lineterm="")
    return "\n".join(line for line in lines if not line.startswith(("---", "+++", "@@")))


def diff_text(diff: str) -> Text:
    """A unified diff coloured as terminals do: additions green, removals red, hunks cyan."""
    text = Text()
    lines = diff.splitlines()
    for number, line in enumerate(lines):
        if line.startswith(("+++", "---")):
            style = "bold"
        elif line.startswith("@@"):
            style = "cyan"
        elif line.startswith("+"):
            style = "green"
        elif line.startswith("-"):
            style = "red"
        else:
            style = ""
        text.append(line + ("\n" if number < len(lines) - 1 else ""), style=style)
    if not lines:
        text.append("(no change)", style="dim")
    return text


def diff_stats(diff: str) -> tuple[int, int]:
    """Lines added and removed by a unified diff."""
    added = removed = 0
    for line in diff.splitlines():
        if line.startswith("+") and not line.startswith("+++"):
            added += 1
        elif line.startswith("-") and not line.startswith("---"):
            removed += 1
    return added, removed


# Events and results -----------------------------------------------------------------------


REMINDER_TAGS = re.compile(r"</?reminder>")


def reminder_words(text: str) -> str:
    """The reminder as the user reads it: the model's `<reminder>` tags taken off."""
    return " ".join(REMINDER_TAGS.sub(" ", text).split())


def reminder_line(text: str, level: int, rounds: int | None) -> Text:
    line = Text("⚠ reminder", style="bold yellow")
    if rounds:
        line.append(f" after {rounds} rounds without a plan update", style="yellow")
    words = shorten(reminder_words(text), 160)
    line.append(f": {words}", style="yellow" if level <= 1 else "bold red")
    return line


def files_changed_line(paths: Iterable[str]) -> Text:
    listed = sorted(paths)
    shown = ", ".join(listed[:8]) + (f" and {len(listed) - 8} more" if len(listed) > 8 else "")
    return Text(f"↻ files changed: {shown}", style="magenta")


def _size(count: int) -> str:
    return f"{count} bytes" if count < 1024 else f"{count / 1024:.1f} kB"


def instructions_line(files: Any) -> Text | None:
    """`project instructions: AGENTS.md (2.1 kB)`: what of the repository's instructions the
    model was given (None when it was given none)."""
    if not isinstance(files, list) or not files:
        return None
    shown: list[str] = []
    for item in files:
        if not isinstance(item, dict):
            continue
        size = item.get("bytes")
        cut = item.get("cut")
        about = _size(size) if isinstance(size, int) else ""
        if isinstance(cut, int) and cut:
            about += f", {_size(cut)} of it left out (limit 32 kB)"
        shown.append(f"{item.get('path')} ({about})" if about else str(item.get("path")))
    return Text("project instructions: " + ", ".join(shown), style="dim")


RETRY_REASONS = {
    "rate_limited": "the model API is rate limiting",
    "overloaded": "the model API is overloaded",
    "server_error": "the model API failed",
    "timeout": "the model API did not answer in time",
    "connection": "could not reach the model API",
}


def retrying_line(attempt: Any, of: Any, reason: Any, delay: Any) -> Text:
    """`⟳ the model API is rate limiting: retry 1 of 2 in 0.5 s`: a retry is never silent."""
    why = RETRY_REASONS.get(str(reason), "the model API failed")
    which = f" {attempt} of {of}" if isinstance(attempt, int) and isinstance(of, int) else ""
    when = f" in {delay:.1f} s" if isinstance(delay, int | float) else ""
    return Text(f"⟳ {why}: retry{which}{when}", style="yellow")


def compacted_line(before: Any, after: Any, strategy: Any, unchanged: Any = None) -> Text:
    """`⇣ compacted: ~181,204 → ~23,950 tokens (old tool results cleared); plan and
    scratchpad kept verbatim`, or (``unchanged``) that nothing could be made smaller."""
    if unchanged is True:
        line = Text("⇣ not compacted", style="bold cyan")
        size = f" ~{before:,} tokens" if isinstance(before, int) else " it"
        line.append(
            f": nothing could make{size} smaller (the plan, the scratchpad and the last round "
            "are kept whole); going on",
            style="cyan",
        )
        return line
    line = Text("⇣ compacted", style="bold cyan")
    if isinstance(before, int) and isinstance(after, int):
        line.append(f": ~{before:,} → ~{after:,} tokens", style="cyan")
    words = STRATEGY_WORDS.get(str(strategy), str(strategy))
    line.append(f" ({words}); plan and scratchpad kept verbatim", style="cyan")
    return line


def usage_line(usage: Mapping[str, Any]) -> str:
    """`tokens: input 24,704 (21,245 cached, 3,459 newly cached) · output 1,318`.

    The input is what the requests' prompts cost in all, `totalInputTokens` as the server adds
    it up (an older server's: `inputTokens`, only the part neither read from nor written to the
    cache, plus the cached parts).
    """

    def number(key: str) -> int:
        value = usage.get(key)
        return value if isinstance(value, int) and not isinstance(value, bool) else 0

    cached, written = number("cacheReadInputTokens"), number("cacheCreationInputTokens")
    parts = [f"{cached:,} cached"] if cached else []
    if written:
        parts.append(f"{written:,} newly cached")
    detail = f" ({', '.join(parts)})" if parts else ""
    total = usage.get("totalInputTokens")
    if not isinstance(total, int) or isinstance(total, bool):
        total = number("inputTokens") + cached + written
    return f"tokens: input {total:,}{detail} · output {number('outputTokens'):,}"


def result_text(result: Mapping[str, Any], *, include_text: bool) -> Text:
    """`done after 9 rounds`, then the error and (optionally) the final text."""
    status = str(result.get("status", "error"))
    rounds = result.get("rounds")
    line = Text(status, style=RESULT_STYLES.get(status, "bold"))
    if isinstance(rounds, int) and rounds > 0:
        line.append(f" after {rounds} round{'s' if rounds != 1 else ''}")
    error = result.get("error")
    error = error.strip() if isinstance(error, str) else ""
    if error:
        line.append("\nerror: ", style="bold red")
        line.append(error, style="red")
    body = result_body(result)
    if include_text and body:
        line.append("\n" + body)
    return line


def result_body(result: Mapping[str, Any]) -> str:
    """The run's final text to show below its status; "" when it only restates the error
    ("The model API failed: <error>"), which is said once."""
    error = result.get("error")
    error = error.strip() if isinstance(error, str) else ""
    body = result.get("text")
    body = body.strip() if isinstance(body, str) else ""
    return "" if error and error in body else body


DEFAULT_API_URL = "https://api.anthropic.com"
AUTH_ERROR = re.compile(r"\(HTTP 40[13]\)|authentication_error|permission_error")
CONNECTION_ERROR = re.compile(r"Could not reach the model API|model API connection failed")


def api_error_hint(error: str, env: Mapping[str, str]) -> str | None:
    """What to check after a model API error, naming the variable and the URL the terminal's
    server used: a refused key (401, 403) or an endpoint that could not be reached."""
    url = env.get("ANTHROPIC_BASE_URL") or DEFAULT_API_URL
    where = "ANTHROPIC_BASE_URL" if env.get("ANTHROPIC_BASE_URL") else "the default endpoint"
    if AUTH_ERROR.search(error):
        variable = "ANTHROPIC_API_KEY" if env.get("ANTHROPIC_API_KEY") else "ANTHROPIC_AUTH_TOKEN"
        return f"The model API at {url} refused the key: check {variable}."
    if CONNECTION_ERROR.search(error):
        return f"Could not connect to {url} ({where}): check the URL and your network."
    return None


# Markdown -----------------------------------------------------------------------------------


class LeftHeading(Heading):
    """A heading on the left, as the lines around it: a transcript, not a page."""

    LEVEL_ALIGN = MappingProxyType(dict.fromkeys(("h1", "h2", "h3", "h4", "h5", "h6"), "left"))  # type: ignore[assignment]


class TerminalMarkdown(Markdown):
    elements: ClassVar[dict[str, type[MarkdownElement]]] = {
        **Markdown.elements,
        "heading_open": LeftHeading,
    }

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        # rich begins a list with a blank line of its own: printed as the block after a
        # paragraph ("Done. It now has:"), below the blank line between blocks, it made two.
        leading = True
        for segment in super().__rich_console__(console, options):
            if leading and isinstance(segment, Segment) and segment.text in ("", "\n"):
                continue
            leading = False
            yield segment


def markdown(text: str) -> Markdown:
    """The model's Markdown for a terminal: headings, emphasis, lists, code, tables; its
    control characters shown, not obeyed."""
    return TerminalMarkdown(visible(text), code_theme="ansi_dark", hyperlinks=False)


FENCE = re.compile(r"^ {0,3}(```|~~~)")


def complete_blocks(text: str) -> tuple[str, str]:
    """(the Markdown blocks of `text` that are complete, the rest): a block ends at a blank
    line outside a code fence once the next line has begun, not indented (an indented one may
    continue a list item)."""
    lines = text.split("\n")
    fence: str | None = None
    end = rest = 0  # where the complete blocks end, and where the rest begins
    position = 0
    for number, line in enumerate(lines[:-1]):  # the last piece has no newline yet
        start = position
        position += len(line) + 1
        opened = FENCE.match(line)
        if opened and (fence is None or opened.group(1) == fence):
            fence = opened.group(1) if fence is None else None
            continue
        if fence is None and not line.strip():
            following = lines[number + 1]
            if following and not following[0].isspace() and following.strip():
                end = start
                rest = position
    if end == 0:
        return "", text
    done = text[:end].strip("\n")
    return (done, text[rest:]) if done else ("", text[rest:])


# MCP ----------------------------------------------------------------------------------------

MCP_PREFIX = "mcp__"


def mcp_call_text(request: Mapping[str, Any]) -> str:
    """A `plansight/approveTool` request in words: the server, the tool and its input."""
    tool_input = request.get("input")
    shown = json.dumps(tool_input, ensure_ascii=False) if tool_input else "no input"
    return (
        f"MCP tool {request.get('tool', '?')} of the server {request.get('server', '?')} "
        f"wants to run with {shorten(shown, 300)}"
    )


def mcp_trust_text(request: Mapping[str, Any]) -> str:
    """A `plansight/approveMcpServer` request in words: the file and what would run."""
    command = request.get("command")
    if isinstance(command, str):
        args = request.get("args")
        words = [command, *(str(a) for a in args)] if isinstance(args, list) else [command]
        what = f"runs the command: {shlex.join(words)}"
    else:
        what = f"connects to {request.get('url', '?')}"
    sets = _names(request.get("env"))
    pulls = _names(request.get("fromHost"))
    # What it would take from this computer is part of what a yes allows.
    gets = f"\nIt sets the variables: {sets}" if sets else ""
    if pulls:
        gets += f"\nIt receives this computer's variables: {pulls}"
    return (
        f"{request.get('source', 'A workspace file')} names the MCP server "
        f"{request.get('name', '?')}, which {what}{gets}\n"
        "Only allow it if you trust this workspace."
    )


def _names(value: Any) -> str:
    return ", ".join(str(name) for name in value) if isinstance(value, list) else ""


def mcp_server_lines(servers: Iterable[Mapping[str, Any]]) -> list[Text]:
    """`plansight/mcp`'s servers, one block each: name, status, source, tools, error."""
    styles = {"ready": "green", "starting": "cyan", "error": "bold red", "untrusted": "yellow"}
    lines: list[Text] = []
    for server in servers:
        status = str(server.get("status", "?"))
        line = Text.assemble(
            (str(server.get("name", "?")), "bold"),
            "  ",
            (status, styles.get(status, "dim")),
            (f"  {server.get('source', '')}", "dim"),
        )
        lines.append(line)
        tools = [str(t) for t in server.get("tools", [])]
        if tools:
            lines.append(Text(f"  {len(tools)} tools: " + shorten(", ".join(tools), 300)))
        error = server.get("error")
        if isinstance(error, str) and error:
            lines.append(Text(f"  {error}", style="red" if status == "error" else "dim"))
    if not lines:
        lines.append(
            Text(
                "No MCP servers configured: add them to ~/.config/plansight/mcp.json, the "
                "workspace's .mcp.json or .vscode/mcp.json.",
                style="dim",
            )
        )
    return lines


def mcp_tool_parts(name: str) -> tuple[str, str] | None:
    """(server, tool) of an MCP tool's prefixed name (`mcp__server__tool`), else None."""
    if not name.startswith(MCP_PREFIX):
        return None
    server, sep, tool = name[len(MCP_PREFIX) :].partition("__")
    return (server, tool) if sep and server and tool else None


def sandbox_text(request: Mapping[str, Any]) -> str:
    """What a command to approve may do, from `approveCommand`'s `sandbox` (an older server
    sends none: nothing is said), e.g. "sandboxed: workspace only, no network"."""
    if "sandbox" not in request:
        return ""
    sandbox = request.get("sandbox")
    if not isinstance(sandbox, dict):
        return "not sandboxed: it can change any file you can, and use the network"
    writable = [p for p in sandbox.get("writable") or [] if isinstance(p, str)]
    where = "workspace only" if len(writable) <= 1 else "workspace and " + ", ".join(writable[1:])
    network = "with network" if sandbox.get("network") is True else "no network"
    return f"sandboxed: {where}, {network}"
