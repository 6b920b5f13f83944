"""s2mc command-line interface (docs/architecture.md)."""
