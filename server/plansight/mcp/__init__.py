"""MCP tools: the servers the user already configured, trusted before they start, approved per
call, and cheap in the prompt (protocol version 3, "MCP tools").

- `config`: the four sources of servers (the user's file, `.mcp.json`, `.vscode/mcp.json`, the
  client's servers), read and checked; each entry says whether it is trusted as it stands;
- `trust`: what the user decided, remembered per workspace (trusted servers, tools always
  allowed), forgotten when an entry changes;
- `servers`: one connection per server (stdio or streamable HTTP, with the official SDK), its
  status, start, stop and restart; `McpServers` owns them all;
- `results`: an MCP tool result as the Messages API's tool_result content;
- `tools`: the tools offered to the model for one run (each server's tool, or `mcp_search` and
  `mcp_call` when there are too many), with per-call approval;
- `feature`: the whole, as the session owns it (`McpFeature`).

This package is `plansight.mcp`; the SDK is the top-level `mcp`. Every import here is absolute,
so the two never meet.
"""
