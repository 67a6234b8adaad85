"""Compaction of long sessions: `rules` (pure: size estimate, clearing old tool results, the
summarized conversation) and `compactor` (their use in a session: when, the summary request, the
atomic replacement)."""
