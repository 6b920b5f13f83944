"""The one error type every s2mc component raises for bad input.

It lives in the foundation below every component (s2mc.common) so that every component can use it
without reaching up the data flow; the CLI turns it into a one-line message and a non-zero exit.
"""

EXCERPT_CHARS = 60


class S2mcError(Exception):
    """A user-facing error: the message is one line and already says where (file:line, core, ...)."""


def excerpt(text: str, limit: int = EXCERPT_CHARS) -> str:
    """Input text as an error message may quote it: short (a 10 MB line must not come back whole)
    and printable (control characters escaped, so the message stays one line on a terminal)."""
    cut = text[:limit]
    out = "".join(c if c.isprintable() else repr(c)[1:-1] for c in cut)
    return out + f"... ({len(text)} characters)" if len(text) > limit else out
