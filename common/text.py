"""Plain-text tables, as the commands print them (the simulator's runs, the seed comparisons, the
fidelity hypotheses): every layer prints with the same rule, so it lives at the bottom."""


def text_table(headers: list[str], rows: list[list[str]]) -> str:
    """A plain-text table with right-aligned columns and a rule under the header."""
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(headers)]
    line = lambda cells: "  ".join(c.rjust(w) for c, w in zip(cells, widths))  # noqa: E731
    return "\n".join([line(headers), line(["-" * w for w in widths])] + [line(r) for r in rows])
