"""The Agent API (`/api/agent/v1`): agent-optimized read models with directional signals only."""
