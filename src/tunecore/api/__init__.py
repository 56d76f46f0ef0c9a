"""The user-facing layer: entry points and validated configuration."""
