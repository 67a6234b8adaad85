"""The terminal client: `plansight run` and `plansight demo`, an LSP client of `plansight lsp`.

- `client`: the connection to the language server, its handlers and the review decisions;
- `render`: pure functions turning protocol payloads into text for a terminal;
- `ui`: the terminal itself (rich console, live plan, prompts);
- `run` / `demo`: the two commands.
"""
