"""The one way the terminal client's commands print: with control characters made visible.

Whatever a command prints may hold text from the model, a file or a command (a plan item, the
scratchpad, a prompt, a run's answer, a checkpoint's label, an MCP server's error, a path). A
terminal obeys the escape sequences in it: `ESC ]0;… BEL` sets the window title, OSC 52 writes
the clipboard, `ESC[2J` clears the screen. `echo` prints `Text` and `str` through
`render.visible_text` / `render.visible` (`ESC` shows as `^[`), as `plansight run` always has
(`TerminalUI` prints through it too), so `plan`, `history`, `checkpoints`, `restore`, `undo`
and `mcp` show such text without obeying it. Other renderables (a `Markdown`, a `Panel`) are
made visible when they are built (`render.markdown`) and printed as they are.
"""

from __future__ import annotations

from typing import Any

from rich.console import Console, RenderableType
from rich.text import Text

from plansight.cli import render


def shown(renderable: RenderableType) -> RenderableType:
    """`renderable` as printed: a `Text` or `str` with its control characters made visible."""
    if isinstance(renderable, Text):
        return render.visible_text(renderable)
    if isinstance(renderable, str):
        return Text(render.visible(renderable))
    return renderable


def echo(console: Console, *renderables: RenderableType, **options: Any) -> None:
    """`console.print(*renderables, **options)`, each renderable `shown` first."""
    console.print(*(shown(r) for r in renderables), **options)
