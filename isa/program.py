"""A loadable S2 program and its text object format (docs/isa.md, "Object format").

The object file is line oriented and human readable:

    s2obj 1                       ; magic and format version
    entry 0                       ; address of the first instruction every core runs
    symbol <name> <value> <kind>  ; kind: code (a label in a code segment), data (a label in a
                                  ; data segment) or const (a .symbol definition)
    code <addr>                   ; a segment of the private program image, starting at addr
    data <addr>                   ; a segment of the shared data memory, starting at addr
    <word> <word> ...             ; segment contents, 8-digit hex words, at most 8 per line

Symbols come sorted by name, segments in the order they were assembled. write() emits exactly this
canonical layout, so load(write(p)) == p and write(load(text)) == text for any canonical text.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from .errors import S2mcError

MAGIC = "s2obj"
VERSION = 1
WORDS_PER_LINE = 8
SYMBOL_KINDS = ("code", "data", "const")


@dataclass
class Segment:
    kind: str            # "code" or "data"
    addr: int
    words: list[int] = field(default_factory=list)


@dataclass
class Symbol:
    name: str
    value: int
    kind: str            # "code", "data" or "const"


@dataclass
class Program:
    segments: list[Segment] = field(default_factory=list)
    symbols: dict[str, Symbol] = field(default_factory=dict)
    entry: int = 0

    # -- views the simulator needs -------------------------------------------------------------
    def image(self, kind: str) -> list[int]:
        """The flat image of all segments of one kind (zeros in the gaps), from address 0."""
        top = max((s.addr + len(s.words) for s in self.segments if s.kind == kind), default=0)
        img = [0] * top
        for s in self.segments:
            if s.kind == kind:
                img[s.addr:s.addr + len(s.words)] = s.words
        return img

    @property
    def code_image(self) -> list[int]:
        return self.image("code")

    @property
    def data_image(self) -> list[int]:
        return self.image("data")

    def address_of(self, name: str) -> int:
        sym = self.symbols.get(name.lower())
        if sym is None:
            raise S2mcError(f"no symbol '{name}' in the program")
        return sym.value

    # -- object format -------------------------------------------------------------------------
    def to_text(self) -> str:
        out = [f"{MAGIC} {VERSION}", f"entry {self.entry}"]
        for name in sorted(self.symbols):
            s = self.symbols[name]
            out.append(f"symbol {s.name} {s.value} {s.kind}")
        for seg in self.segments:
            out.append(f"{seg.kind} {seg.addr}")
            for i in range(0, len(seg.words), WORDS_PER_LINE):
                out.append(" ".join(f"{w & 0xFFFFFFFF:08x}" for w in seg.words[i:i + WORDS_PER_LINE]))
        return "\n".join(out) + "\n"

    @classmethod
    def from_text(cls, text: str, filename: str = "<object>") -> "Program":
        prog = cls()
        seg: Segment | None = None
        seen_magic = False
        for lineno, raw in enumerate(text.splitlines(), 1):
            line = raw.split(";", 1)[0].strip()
            if not line:
                continue

            def fail(msg: str) -> S2mcError:
                return S2mcError(f"{filename}:{lineno}: bad object file: {msg}: '{raw.strip()}'")

            parts = line.split()
            if not seen_magic:
                if parts != [MAGIC, str(VERSION)]:
                    raise fail(f"expected '{MAGIC} {VERSION}' on the first line")
                seen_magic = True
                continue
            head = parts[0]
            try:
                if head == "entry" and len(parts) == 2:
                    prog.entry = _nonneg(parts[1])
                elif head == "symbol" and len(parts) == 4:
                    if parts[3] not in SYMBOL_KINDS:
                        raise fail(f"symbol kind must be one of {', '.join(SYMBOL_KINDS)}")
                    prog.symbols[parts[1]] = Symbol(parts[1], int(parts[2], 10), parts[3])
                elif head in ("code", "data") and len(parts) == 2:
                    seg = Segment(head, _nonneg(parts[1]))
                    prog.segments.append(seg)
                elif all(_is_word(p) for p in parts):
                    if seg is None:
                        raise fail("words before any 'code' or 'data' line")
                    seg.words.extend(_signed32(int(p, 16)) for p in parts)
                else:
                    raise fail("unrecognised line")
            except ValueError:
                raise fail("malformed number") from None
        if not seen_magic:
            raise S2mcError(f"{filename}: bad object file: empty (expected '{MAGIC} {VERSION}')")
        return prog


def _nonneg(text: str) -> int:
    v = int(text, 10)
    if v < 0:
        raise ValueError(text)
    return v


def _is_word(text: str) -> bool:
    return len(text) == 8 and all(c in "0123456789abcdef" for c in text)


def _signed32(v: int) -> int:
    v &= 0xFFFFFFFF
    return v - (1 << 32) if v >> 31 else v
