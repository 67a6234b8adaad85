"""The MCP tools offered to the model for one run, each call approved first.

Each ready server's tool is offered as `mcp__<server>__<tool>` (characters other than letters,
digits, `_` and `-` become `_`; cut to 64 characters; a name taken twice is offered once) with
the server's description and input schema. When those definitions together pass 10 % of the
context window, or there are more than 40 of them, they are deferred: the model gets
`mcp_search { query }` (the matching tools' names, descriptions and schemas) and
`mcp_call { server, tool, arguments }` instead, whose size does not grow with the tools.

A call runs only once allowed: by the server's `autoApprove` list, by an earlier "always" of
the user (remembered per workspace, `trust.py`), or by the user's answer to the approval hook
(which answers yes by itself with the option `autoApprove.mcp`). A denial is an error result
with the user's feedback; so are a call past its `toolTimeout` and a server that exited.
"""

from __future__ import annotations

import json
import logging
import re
from dataclasses import dataclass
from typing import Any

from plansight.engine.compaction.rules import estimate_tokens
from plansight.engine.hooks import ApproveToolHook, ToolApproval
from plansight.mcp.results import result_content
from plansight.mcp.servers import CallTimedOut, McpConnection, McpServers, ServerGone
from plansight.mcp.trust import TrustMemory
from plansight.protocol.names import plain_input_summary
from plansight.tools.context import ToolContext
from plansight.tools.errors import ToolError
from plansight.tools.registry import Tool, ToolKind, ToolOutcome, require_str, text_of

log = logging.getLogger(__name__)

PREFIX = "mcp__"
MAX_NAME = 64
MAX_DIRECT_TOOLS = 40
DEFERRAL_SHARE = 0.10
SEARCH_TOOL = "mcp_search"
CALL_TOOL = "mcp_call"
SEARCH_RESULTS = 10
_UNSAFE = re.compile(r"[^A-Za-z0-9_-]")


# How clients show an MCP call (ACP's tool call kind): `other`, ACP's default. Another program's
# tool may read, fetch or change anything, so no narrower kind (`fetch`, `execute`) is honest.
MCP_KIND: ToolKind = "other"


def call_title(server: str, tool: str, summary: str | None = None) -> str:
    """`Call create_issue of github: {...}`: an MCP call's title in words."""
    return f"Call {tool} of {server}" + (f": {summary}" if summary else "")


def title_of_name(name: str, summary: str | None = None) -> str | None:
    """The title of a call of `mcp__<server>__<tool>` known by its name only (a past run's, not
    offered now); None for a name that is not an MCP tool's."""
    if not name.startswith(PREFIX):
        return None
    server, _, tool = name[len(PREFIX) :].partition("__")
    return call_title(server, tool or name, summary)


def tool_name(server: str, tool: str) -> str:
    """The name a server's tool is offered by: `mcp__<server>__<tool>`, safe and at most 64."""
    return f"{PREFIX}{_UNSAFE.sub('_', server)}__{_UNSAFE.sub('_', tool)}"[:MAX_NAME]


@dataclass(frozen=True)
class Offered:
    """One server tool as the model sees it."""

    name: str  # the prefixed name
    connection: McpConnection
    tool: Any  # the SDK's Tool

    @property
    def server(self) -> str:
        return self.connection.entry.name

    def schema(self) -> dict[str, Any]:
        schema = dict(self.tool.input_schema or {})
        if schema.get("type") != "object":
            # The Messages API takes object schemas only; MCP's are objects by the spec.
            schema = {"type": "object", "properties": {}}
        return schema

    def definition(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "description": self.tool.description or "",
            "input_schema": self.schema(),
        }


class McpTools:
    def __init__(self, servers: McpServers, trust: TrustMemory, approve: ApproveToolHook) -> None:
        self.servers = servers
        self.trust = trust
        self.approve = approve
        self._offered: dict[str, Offered] = {}  # this run's, by prefixed name
        self.deferred = False

    def for_run(self, context_window: int) -> list[Tool]:
        """The tools of the next run, from the servers ready now (fixed for the whole run)."""
        offered: dict[str, Offered] = {}
        for connection in self.servers.offered():
            for tool in connection.tools:
                name = tool_name(connection.entry.name, tool.name)
                if name in offered:
                    log.warning(
                        "MCP tool %s/%s: its name %s is taken",
                        connection.entry.name,
                        tool.name,
                        name,
                    )
                    continue
                offered[name] = Offered(name, connection, tool)
        self._offered = offered
        size = estimate_tokens([item.definition() for item in offered.values()])
        self.deferred = len(offered) > MAX_DIRECT_TOOLS or size > DEFERRAL_SHARE * context_window
        if not offered:
            return []
        if self.deferred:
            return [self._search_tool(), self._call_tool()]
        return [self._direct(item) for item in offered.values()]

    def definitions(self) -> list[dict[str, Any]]:
        """This run's server tools one by one, as they are (or would be, undeferred) offered."""
        return [item.definition() for item in self._offered.values()]

    # The tools -------------------------------------------------------------------------
    def _direct(self, item: Offered) -> Tool:
        async def handler(ctx: ToolContext, tool_input: dict[str, Any]) -> ToolOutcome:
            return await self.call(item, tool_input, ctx.call_id)

        definition = item.definition()
        return Tool(
            name=item.name,
            description=definition["description"],
            input_schema=definition["input_schema"],
            handler=handler,
            kind=MCP_KIND,
            title=lambda tool_input, summary: call_title(item.server, item.tool.name, summary),
            asks=True,
        )

    def _search_tool(self) -> Tool:
        by_server: dict[str, int] = {}
        for item in self._offered.values():
            by_server[item.server] = by_server.get(item.server, 0) + 1
        servers = ", ".join(f"{name} ({count} tools)" for name, count in by_server.items())

        async def handler(ctx: ToolContext, tool_input: dict[str, Any]) -> str:
            return self.search(require_str(tool_input, "query"))

        return Tool(
            name=SEARCH_TOOL,
            description=(
                f"Find tools of the connected MCP servers: {servers}. Answers the names, "
                "descriptions and input schemas of the tools matching the query (words of "
                "their names or descriptions; a server's name lists its tools). Call a tool "
                f"found with {CALL_TOOL}."
            ),
            input_schema={
                "type": "object",
                "properties": {"query": {"type": "string", "description": "words to look for"}},
                "required": ["query"],
            },
            handler=handler,
            kind="search",
        )

    def _call_tool(self) -> Tool:
        async def handler(ctx: ToolContext, tool_input: dict[str, Any]) -> ToolOutcome:
            server = require_str(tool_input, "server", allow_empty=False)
            tool = require_str(tool_input, "tool", allow_empty=False)
            arguments = tool_input.get("arguments", {})
            if not isinstance(arguments, dict):
                raise ToolError("'arguments' must be an object (the tool's input).")
            item = self._offered.get(tool_name(server, tool)) or self._offered.get(tool)
            if item is None:
                raise ToolError(
                    f"No MCP tool {tool!r} on server {server!r}: find tools with {SEARCH_TOOL}."
                )
            return await self.call(item, arguments, ctx.call_id)

        return Tool(
            name=CALL_TOOL,
            description=(
                f"Call a tool of an MCP server, found with {SEARCH_TOOL}: its server's name, "
                "the tool's name and its input (matching the tool's input schema)."
            ),
            input_schema={
                "type": "object",
                "properties": {
                    "server": {"type": "string"},
                    "tool": {"type": "string"},
                    "arguments": {"type": "object"},
                },
                "required": ["server", "tool"],
            },
            handler=handler,
            summarize_input=_call_summary,
            kind=MCP_KIND,
            title=lambda tool_input, summary: call_title(
                text_of(tool_input, "server"), text_of(tool_input, "tool")
            ),
            asks=True,
        )

    def search(self, query: str) -> str:
        terms = [t for t in re.split(r"\W+", query.lower()) if t]
        scored: list[tuple[int, int, Offered]] = []
        for order, item in enumerate(self._offered.values()):
            name = f"{item.server} {item.tool.name}".lower()
            words = set(re.split(r"\W+", name))
            text = f"{name} {item.tool.description or ''}".lower()
            score = sum(
                3 if term in words else 2 if term in name else 1 for term in terms if term in text
            )
            if item.server.lower() in terms:
                score += 1
            if score or not terms:
                scored.append((-score, order, item))
        if not scored:
            return f"No MCP tool matches {query!r}. Servers: " + ", ".join(
                sorted({item.server for item in self._offered.values()})
            )
        scored.sort(key=lambda found: found[:2])
        shown = [item for _, _, item in scored[:SEARCH_RESULTS]]
        parts = [
            f"server: {item.server}\ntool: {item.tool.name}\ndescription: "
            f"{item.tool.description or ''}\ninput schema: "
            f"{json.dumps(item.schema(), separators=(',', ':'))}"
            for item in shown
        ]
        more = len(scored) - len(shown)
        if more > 0:
            parts.append(f"({more} more match: use more specific words)")
        return "\n\n".join(parts)

    # One call --------------------------------------------------------------------------
    async def call(
        self, item: Offered, arguments: dict[str, Any], call_id: str | None = None
    ) -> ToolOutcome:
        entry = item.connection.entry
        tool = item.tool.name
        if tool not in entry.auto_approve and not self.trust.always_allowed(entry, tool):
            decision = await self.approve(ToolApproval(entry.name, tool, arguments, call_id))
            if not decision.approved:
                said = f" The user said: {decision.feedback}" if decision.feedback else ""
                return ToolOutcome(
                    f"The user denied the call of {tool} on the MCP server {entry.name}.{said}",
                    True,
                )
            if decision.always:
                self.trust.allow_always(entry, tool)
        try:
            result = await item.connection.call(tool, arguments)
        except ServerGone as err:
            again = " It is started again at its next call." if err.restarts else ""
            return ToolOutcome(f"The MCP server {entry.name} is not available: {err}.{again}", True)
        except CallTimedOut as err:
            return ToolOutcome(
                f"The call of {tool} on the MCP server {entry.name} was cancelled: {err} "
                f"(its toolTimeout).",
                True,
            )
        except Exception as err:
            # The server answered with a JSON-RPC error (bad arguments, say): the model reads it.
            return ToolOutcome(f"The MCP server {entry.name} answered with an error: {err}", True)
        return ToolOutcome(result_content(result), bool(getattr(result, "is_error", False)))


def _call_summary(tool_input: dict[str, Any]) -> str:
    server, tool = text_of(tool_input, "server"), text_of(tool_input, "tool")
    return f"{server}/{tool} {plain_input_summary(tool_input.get('arguments'))}".strip()
