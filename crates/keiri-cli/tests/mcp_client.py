"""Drives `keiri mcp` with the official Python MCP SDK (PyPI `mcp`), a client we did not write.

Usage: python mcp_client.py SPEC_JSON

SPEC_JSON is a file holding
    {"command": "/path/to/keiri", "args": ["mcp", "--root", "..."],
     "mode": "legacy" | "auto", "calls": [{"tool": "name", "arguments": {...}}, ...],
     "elicit": {...}}   (optional: the client answers elicitation requests with this content,
                          and records each request under "elicited")

The script starts the server over stdio, lets the SDK negotiate the session (`legacy` is the
initialize handshake that Claude Desktop and VS Code use; `auto` probes server/discover first),
lists the tools, makes the calls in order and prints one JSON object on stdout:
    {"protocol_version", "server_info", "instructions", "tools": [...], "calls": [...]}
Every call is recorded, including tool errors, so the Rust test makes all the assertions. The
SDK validates each successful result against the tool's output schema, so a result that does
not match its declared schema fails the run.
"""

import asyncio
import json
import sys

from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp.types import ElicitResult


def dump(model):
    return model.model_dump(mode="json", by_alias=True, exclude_none=True)


async def main(spec):
    params = StdioServerParameters(command=spec["command"], args=spec["args"])
    out = {"elicited": []}
    options = {}
    if "elicit" in spec:

        async def elicit(context, request):
            out["elicited"].append(dump(request))
            return ElicitResult(action="accept", content=spec["elicit"])

        options["elicitation_callback"] = elicit
    async with Client(
        params, mode=spec.get("mode", "legacy"), read_timeout_seconds=60, **options
    ) as client:
        out["protocol_version"] = client.protocol_version
        out["server_info"] = dump(client.server_info) if client.server_info else None
        out["instructions"] = client.instructions
        out["capabilities"] = dump(client.server_capabilities)
        listed = await client.list_tools()
        out["tools"] = [dump(tool) for tool in listed.tools]
        out["calls"] = []
        for call in spec.get("calls", []):
            result = await client.call_tool(call["tool"], call.get("arguments", {}))
            texts = [block.text for block in result.content if getattr(block, "type", None) == "text"]
            out["calls"].append(
                {
                    "tool": call["tool"],
                    "is_error": bool(result.is_error),
                    "structured": result.structured_content,
                    "text": texts,
                }
            )
    return out


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: mcp_client.py SPEC_JSON")
    with open(sys.argv[1], encoding="utf-8") as f:
        spec = json.load(f)
    result = asyncio.run(main(spec))
    json.dump(result, sys.stdout, ensure_ascii=False)
    sys.stdout.write("\n")
