"""The terminal client: `plansight run`, `plansight demo` and the interactive session (`plansight`
alone), LSP clients of `plansight lsp`.

- `client`: the connection to the language server, its handlers and the review decisions;
- `render`: pure functions turning protocol payloads into text for a terminal;
- `ui`: the terminal itself (rich console, live plan, prompts);
- `run` / `demo`: the two commands; `prompts`: a run's prompt from an argument, stdin or a file;
- `interactive`: the session of many prompts on one server, and its slash commands;
- `show` / `checkpoints` / `mcp`: the commands that look at a workspace without a run.
"""
