"""A tiny stdio MCP server for the capture test (needs the ``mcp`` SDK, test extra).

Tools: ``echo`` returns its text; ``big`` returns ``n`` bytes of text after
reporting progress ``steps`` times; ``fail`` raises a ToolError, which the SDK
turns into an ``isError`` result; ``reject`` raises an MCPError, which the SDK
sends as a JSON-RPC error response. Exact sizes are what the test checks.

Run: ``python tests/mcp_server_fixture.py``. Importing this module needs no
``mcp`` (pytest imports every module for doctests): the SDK is imported when
the server is built.
"""

# No ``from __future__ import annotations``: the SDK reads the tools' type hints (``ctx: Context``), and
# Context is only defined inside build_server.
from typing import Any


def build_server() -> Any:
    from mcp.server import MCPServer
    from mcp.server.mcpserver import Context
    from mcp.server.mcpserver.exceptions import ToolError
    from mcp.shared.exceptions import MCPError

    server = MCPServer("fixture")

    @server.tool(description="Echo the given text back.")
    def echo(text: str) -> str:
        return text

    @server.tool(description="Return n bytes of filler text, reporting progress steps times first.")
    async def big(n: int, ctx: Context, steps: int = 0) -> str:
        for i in range(steps):
            await ctx.report_progress(i + 1, steps)
        return ("0123456789abcdef" * (n // 16 + 1))[:n]

    @server.tool(description="Always fails.")
    def fail(reason: str) -> str:
        raise ToolError(f"failed: {reason}")

    @server.tool(description="Refuses at the protocol level.")
    def reject(code: int) -> str:
        raise MCPError(code, "rejected by policy")

    return server


if __name__ == "__main__":
    build_server().run()
