"""The server's guard on connections: a cap per client address, and time limits on a request's
header and body, in front of the application (docs/server.md, "Limits").

uvicorn keeps a connection that sends half a request header for ever, and counts it against its
`limit_concurrency`: 340 such connections from one address made every other request answer 503.
It has no per-address cap nor a header timeout, so the guard is its HTTP protocol (h11), with:

- at most `Limits.connections_per_address` connections open from one address; one more is
  answered 429 at once (with Retry-After) and closed, before anything is read from it;
- a request's header must be complete within `Limits.header_seconds` of the connection's start,
  or of the previous answer on it (408, closed), and its body within `Limits.body_seconds` of its
  header (closed; the application sees the client go).

    config = uvicorn.Config(app, http=guarded(limits))
"""
from __future__ import annotations

import json

from uvicorn.protocols.http.h11_impl import H11Protocol

from .limits import Limits


def _answer(status: str, message: str, headers: str = "") -> bytes:
    body = json.dumps({"error": message}).encode()
    return (f"HTTP/1.1 {status}\r\ncontent-type: application/json\r\ncontent-length: {len(body)}\r\n"
            f"{headers}connection: close\r\n\r\n").encode() + body


def guarded(limits: Limits) -> type:
    """An HTTP protocol class for uvicorn (Config's `http`) with the guard of these limits; its
    count of connections per address is its own (one server)."""
    per_address: dict[str, int] = {}
    busy = _answer("429 Too Many Requests",
                   f"busy: {limits.connections_per_address} connections are open from your address, this "
                   f"server's limit; try again in {limits.retry_after} s", f"retry-after: {limits.retry_after}\r\n")
    slow = _answer("408 Request Timeout",
                   f"the request's header did not arrive within {limits.header_seconds:g} s; send it again")

    class Guarded(H11Protocol):
        address: str | None = None         # counted against this address while open
        _phase: str | None = None          # "header" or "body": what the timer waits for
        _timer = None

        def connection_made(self, transport) -> None:
            peer = transport.get_extra_info("peername")
            address = peer[0] if isinstance(peer, tuple) else ""
            if per_address.get(address, 0) >= limits.connections_per_address:
                self.refused = True
                transport.write(busy)
                transport.close()
                return
            self.refused = False
            super().connection_made(transport)
            self.address = address
            per_address[address] = per_address.get(address, 0) + 1
            self._watch()

        def connection_lost(self, exc) -> None:
            if self.refused:
                return
            if self.address is not None:
                left = per_address[self.address] - 1
                if left:
                    per_address[self.address] = left
                else:
                    del per_address[self.address]
                self.address = None
            self._arm(None)
            super().connection_lost(exc)

        def data_received(self, data: bytes) -> None:
            super().data_received(data)
            self._watch()

        def on_response_complete(self) -> None:
            super().on_response_complete()
            self._watch()

        def _watch(self) -> None:
            """Arms the timer for what the connection waits for now: a request's header (none yet,
            or the last one answered), its body, or nothing (the application has the request)."""
            cycle = self.cycle
            phase = ("header" if cycle is None or cycle.response_complete
                     else "body" if cycle.more_body else None)
            if phase != self._phase:
                self._arm(phase)

        def _arm(self, phase: str | None) -> None:
            if self._timer is not None:
                self._timer.cancel()
                self._timer = None
            self._phase = phase
            if phase is not None:
                seconds = limits.header_seconds if phase == "header" else limits.body_seconds
                self._timer = self.loop.call_later(seconds, self._too_slow)

        def _too_slow(self) -> None:
            self._timer = None
            if self.transport.is_closing():
                return
            if self._phase == "header":      # a body cut short: the application answers nobody
                self.transport.write(slow)
            self.transport.close()

    return Guarded
