"""The MCP server: semantic_search, find_vendor_info and the graph tools over search/ and kg/.

The top of the runtime: may import ``search``, ``kg`` and ``sql``; nothing imports it.
Each tool is declared once in :mod:`server.tools` and published by :mod:`server.registry`.
"""
