"""The MCP server: semantic_search, find_vendor_info and the graph tools over search/ and kg/."""
