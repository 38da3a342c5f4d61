"""``akasha serve``: one process owns a store and serves it to agents (MCP tools over stdio
or streamable HTTP) and notebooks (:func:`connect`). See :mod:`.http`, :mod:`.mcp_tools`,
:mod:`.service` and :mod:`.client`."""

from .client import RemoteMemory, connect

__all__ = ["RemoteMemory", "connect"]
