"""The Agent Client Protocol front door (`plansight acp`): Zed, JetBrains, Neovim and Emacs.

A thin adapter over `plansight.session` (it shares nothing with `plansight.lsp`): `agent` answers
the ACP requests, `updates` maps the engine's events to session updates (pure), `permissions`
answers the engine's hooks with `session/request_permission` and `elicitation/create`, `files`
reads and writes through the editor's `fs/*`, `commands` the slash commands, `servers` the MCP
servers an editor gives, `outbox` the updates on their way out, `texts` what the user reads and
writes in a prompt, `stdio` the transport.
"""
