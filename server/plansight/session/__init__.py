"""One agent session over a workspace, as every front door (LSP, ACP) embeds it: `session` (runs
and the wiring), `lock` (one run at a time), `settings` (environment and options), `persistence`
(saved as it happens, loaded after a restart) on `storage`, and `history` (past runs)."""
