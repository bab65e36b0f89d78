"""The MCP tools' output schemas: the REST resources' shapes (camelCase), with each tool's answer envelope."""
