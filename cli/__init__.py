"""s2mc command-line interface (DESIGN.md §9)."""
