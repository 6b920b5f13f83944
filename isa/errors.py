"""The one error type every s2mc component raises for bad input.

It lives in the lowest layer (the ISA) so that every component can use it without reaching up the
data flow; the CLI turns it into a one-line message and a non-zero exit.
"""


class S2mcError(Exception):
    """A user-facing error: the message is one line and already says where (file:line, core, ...)."""
