"""Plain-text tables, as the commands print them (the simulator's runs, the seed comparisons, the
fidelity hypotheses): every layer prints with the same rule, so it lives at the bottom."""


def text_table(headers: list[str], rows: list[list[str]]) -> str:
    """A plain-text table with right-aligned columns and a rule under the header."""
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(headers)]
    line = lambda cells: "  ".join(c.rjust(w) for c, w in zip(cells, widths))  # noqa: E731
    return "\n".join([line(headers), line(["-" * w for w in widths])] + [line(r) for r in rows])


def matrix_table(labels: list[str], matrix: list[list[float | None]], fmt=lambda x: f"{x:.1f}",
                 corner: str = "") -> str:
    """A square matrix as a text table, row and column headed by `labels`; an empty cell (None: the
    diagonal of a core-to-core matrix) prints as '-'."""
    rows = [[labels[i]] + ["-" if x is None else fmt(x) for x in row] for i, row in enumerate(matrix)]
    return text_table([corner] + list(labels), rows)
