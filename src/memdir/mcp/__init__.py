"""The MCP server (L4): ``memdir serve``."""
