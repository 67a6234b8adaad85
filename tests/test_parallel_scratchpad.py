"""The scratchpad a parallel run's workers share: all of it seen, each one's own lines written."""

from __future__ import annotations

from plansight.parallel.scratchpad import SharedScratchpad


def test_each_worker_writes_its_own_prefixed_lines_and_reads_everyones() -> None:
    shared = SharedScratchpad("Approach: small steps.")
    one, two = shared.view("1"), shared.view("2")
    told: list[str] = []
    shared.on_change.append(told.append)
    one.write("parser returns a tuple now")
    two.write("tests live in tests/unit")
    assert two.content == (
        "Approach: small steps.\n#1: parser returns a tuple now\n#2: tests live in tests/unit"
    )
    # A worker writing back what it read replaces its own lines only, never a sibling's.
    one.write(two.content + "\nand it is documented")
    assert one.content == (
        "Approach: small steps.\n#1: parser returns a tuple now\n#1: and it is documented\n"
        "#2: tests live in tests/unit"
    )
    two.clear()
    assert "#2:" not in shared.content and told[-1] == shared.content
