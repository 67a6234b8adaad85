"""The engine: the agent loop and what it needs to run, with no front door in it (no LSP, no ACP).

- `loop`: one run (request, decide, apply); `turns`: what follows each model turn, as pure
  decisions; `conversation`: the messages it keeps valid for the API;
- `model`: the only module that talks to the SDK; `prompt`: the system prompt;
- `reminders`: the nag; `planmode`: a run's mode and focus; `compaction/`: long sessions;
- `events`: what the engine reports (listeners subscribe); `hooks`: what it asks of whoever
  embeds it (reviews, approvals, plan review, questions, open documents, MCP trust).
"""
