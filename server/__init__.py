"""The MCP server (semantic_search, find_vendor_info, graph tools); not built yet."""
