"""The reference part of docs/protocol.md, generated from the specs in `names.py`:
`python -m plansight.protocol.reference docs/protocol.md` rewrites it (a test keeps it current)."""

from __future__ import annotations

import sys

from plansight.protocol.names import (
    CLIENT_CAPABILITIES,
    COMPACTION_STRATEGIES,
    ERROR_CODES,
    EVENTS,
    MAX_TODO_ITEMS,
    METHODS,
    PLAN_CHANGE_KINDS,
    PLAN_DECISIONS,
    PLAN_SOURCES,
    PROTOCOL_VERSION,
    RUN_MODES,
    RUN_STATUSES,
    TODO_STATUSES,
)

BEGIN_REFERENCE = (
    "<!-- generated from plansight/protocol: python -m plansight.protocol.reference -->"
)
END_REFERENCE = "<!-- end of the generated part -->"


def _version(since: int) -> str:
    return f"v{since}" if since else "extension"


def _code(text: str) -> str:
    """`text` as a code span in a table cell (a bare | would end the cell)."""
    return "`" + text.replace("|", "\\|") + "`"


def reference_markdown() -> str:
    """The tables of names, codes and values that docs/protocol.md shows, from the specs above."""
    built = {True: "yes", False: "not yet"}
    lines = [
        "| method | direction | kind | params | result | since | built |",
        "|---|---|---|---|---|---|---|",
        *(
            f"| `{m.name}` | {m.direction} | {m.kind} | {_code(m.params)} | "
            f"{_code(m.result) if m.result else '—'} | {_version(m.since)} | {built[m.built]} |"
            for m in METHODS
        ),
        "",
        "| `plansight/event` type | fields besides `type` | since | built |",
        "|---|---|---|---|",
        *(
            f"| `{e.type}` | {_code(e.fields)} | {_version(e.since)} | {built[e.built]} |"
            for e in EVENTS
        ),
        "",
        "| error code | name |",
        "|---|---|",
        *(f"| {code} | `{name}` |" for name, code in ERROR_CODES.items()),
        "",
        "| value | one of |",
        "|---|---|",
        *(
            f"| {what} | {', '.join(f'`{v}`' for v in values)} |"
            for what, values in (
                ("`TodoItem.status`", TODO_STATUSES),
                ("`RunResult.status`", RUN_STATUSES),
                ("`TodoState.source`", PLAN_SOURCES),
                ("`plansight/run` `mode`", RUN_MODES),
                ("`plansight/reviewPlan` `decision`", PLAN_DECISIONS),
                ("`plansight/reviewPlan` `changes[].kind`", PLAN_CHANGE_KINDS),
                ("`compacted` `strategy`", COMPACTION_STRATEGIES),
                ("client capabilities (`experimental.plansight`)", CLIENT_CAPABILITIES),
            )
        ),
        "",
        f'The server announces `experimental.plansight = {{ "version": {PROTOCOL_VERSION} }}`; '
        f"a plan holds at most {MAX_TODO_ITEMS} items.",
    ]
    return "\n".join(lines)


def with_reference(document: str) -> str:
    """`document` with the text between the reference markers replaced by the current tables."""
    start = document.index(BEGIN_REFERENCE) + len(BEGIN_REFERENCE)
    end = document.index(END_REFERENCE, start)
    return f"{document[:start]}\n{reference_markdown()}\n{document[end:]}"


def main(argv: list[str]) -> int:
    """Print the reference tables, or rewrite them in the Markdown files given."""
    if not argv:
        print(reference_markdown())
        return 0
    for path in argv:
        with open(path, encoding="utf-8") as handle:
            text = handle.read()
        with open(path, "w", encoding="utf-8") as handle:
            handle.write(with_reference(text))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
