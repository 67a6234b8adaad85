"""What the agent shows of its work: the plan (`plan`: items, rules, versions, counts, the wire
state and the stored record), its text form for `$EDITOR` (`text`, engine-free), and the
scratchpad."""
