"""One agent session over a workspace, as every front door (LSP, ACP) embeds it: `session` (runs
and the wiring), `changes` (the agent's own changes told from others'), `lock` (one run at a
time, one live server per stored session), `settings` (environment and options), `persistence`
(saved as it happens, loaded after a restart) on `storage`, and `history` (past runs)."""
