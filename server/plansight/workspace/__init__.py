"""The user's folder and how Plansight touches it: `access` (path containment, reads, staleness,
unsaved documents, writes), `textpages` (what the model sees of a file), `atomic` (kill-safe
writes), `ignore` (the one set of gitignore rules), `scan` (what a scan of the folder keeps),
`watcher` (outside changes), `echoes` (the agent's own changes told apart from others')."""
