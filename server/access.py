"""Who is calling the API: the lecturer (the teacher token), a student of the roster (their own
token), or an anonymous member of the class (the shared class token, or no token at all on a
server that asks for none).

    access = Access(token="tuesday", teacher="t-...")
    caller = access.caller("tuesday")          # Caller(role="student", student=None)
    access.caller("wrong")                     # None: refused (401)

Tokens are compared by their SHA-256 digests in a dict, so a lookup takes the same time whatever
the token's first characters (a plain `==` on the secrets would leak a prefix by timing).
"""
from __future__ import annotations

import hashlib
from dataclasses import dataclass

from s2mc.common.errors import S2mcError


@dataclass(frozen=True)
class Caller:
    role: str                    # "teacher" or "student"
    student: str | None = None   # the roster's id; None for an anonymous member of the class

    @property
    def teacher(self) -> bool:
        return self.role == "teacher"


def _digest(token: str) -> bytes:
    return hashlib.sha256(token.encode("utf-8", "surrogatepass")).digest()


class Access:
    def __init__(self, token: str | None = None, teacher: str | None = None,
                 students: dict[str, str] | None = None):
        """token: the shared class token; teacher: the lecturer's; students: token -> student id."""
        self._known: dict[bytes, Caller] = {}
        for given, caller in [*((t, Caller("student", s)) for t, s in (students or {}).items()),
                              (token, Caller("student")), (teacher, Caller("teacher"))]:
            if not given:
                continue
            if _digest(given) in self._known:   # one token, two people: neither could be told apart
                raise S2mcError("the teacher token, the class token and each student's token must differ")
            self._known[_digest(given)] = caller
        # without a class token or a roster, the page works without any token (a loopback server)
        self.required = bool(token or students)

    def caller(self, given: str | None) -> Caller | None:
        """The caller a bearer token names; a missing token is an anonymous student where no token
        is required; None for a token nobody was given (the API answers 401)."""
        if not given:
            return None if self.required else Caller("student")
        return self._known.get(_digest(given))
