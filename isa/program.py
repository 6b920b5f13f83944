"""A loadable S2 program and its text object format (docs/isa.md, "Object format").

The object file is line oriented and human readable:

    s2obj 1                       ; magic and format version
    entry 0                       ; address of the first instruction every core runs
    stacks <base> <words> <count> ; optional: the per-core stack regions the simulator guards
    symbol <name> <value> <kind>  ; kind: code (a label in a code segment), data (a label in a
                                  ; data segment) or const (a .symbol definition)
    code <addr>                   ; a segment of the private program image, starting at addr
    data <addr>                   ; a segment of the shared data memory, starting at addr
    <word> <word> ...             ; segment contents, 8-digit hex words, at most 8 per line
    source <file name>            ; optional debug information (isa/debuginfo.py, compile -g):
    func <name> <line> <lo> <body> <hi> <frame> <params> ; a function's code, body, frame, parameters,
    var <function|-> <name> reg|frame|mem <n> [<words>]   ; a variable's place,
    line <pc> <line>              ; and the line table, one row per run of a line's instructions

The debug lines come last and only when the program has debug information. The stacks line is
written only when the program declares its stacks (`.stacks`), so the object of
a program that declares none is unchanged. Symbols come sorted by name, segments in the order they
were assembled. write() emits exactly this canonical layout, so load(write(p)) == p and
write(load(text)) == text for any canonical text.

The loader accepts exactly what the assembler can produce: numbers in plain decimal, the entry and
segment addresses within the 22-bit address space, no segment running past its last address, names
the assembler accepts, each symbol once. Anything else is one S2mcError naming file:line.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import NamedTuple

from s2mc.common.errors import S2mcError, excerpt

from .debuginfo import VAR_KINDS, DebugInfo, Func, Var
from .instructions import ADS_MAX

MAGIC = "s2obj"
VERSION = 1
WORDS_PER_LINE = 8
SYMBOL_KINDS = ("code", "data", "const")
ADDRESSES = ADS_MAX + 1                      # program and data addresses a 22-bit field can name
VALUE_MIN, VALUE_MAX = -(1 << 31), (1 << 32) - 1   # a .symbol value or data word as written

# Symbol names (the source is lower-cased before it is read); r0..r31 name registers.
NAME = re.compile(r"[a-z_.$][a-z0-9_.$]*")
REGISTER_NAME = re.compile(r"r([0-9]|[12][0-9]|3[01])")
_DECIMAL = re.compile(r"-?[0-9]+")


def is_symbol_name(text: str, kind: str) -> bool:
    """Whether the assembler could have defined a symbol of this kind with this name (a const comes
    from a .symbol line, where a leading '.' would make the name a directive)."""
    return (bool(NAME.fullmatch(text)) and not REGISTER_NAME.fullmatch(text)
            and not (kind == "const" and text.startswith(".")))


class Stacks(NamedTuple):
    """The per-core stack regions a program declares (`.stacks BASE WORDS COUNT`, docs/isa.md):
    core c owns [base + c*words, base + (c+1)*words) for c < count; the simulator faults
    stack_overflow when a core's data access falls in the area of all `count` regions but outside
    its own (docs/timing-model.md, rule 6)."""
    base: int
    words: int
    count: int

    @property
    def end(self) -> int:
        """One past the last word of the area."""
        return self.base + self.words * self.count

    def region(self, core: int) -> tuple[int, int] | None:
        """Core's region as (first, last) word, or None when it has none (core >= count)."""
        if core >= self.count:
            return None
        lo = self.base + core * self.words
        return lo, lo + self.words - 1

    def owner(self, address: int) -> int | None:
        """The core whose region holds this address, or None outside the area."""
        return (address - self.base) // self.words if self.base <= address < self.end else None

    def violates(self, core: int, address: int) -> bool:
        """Whether core may not access this address: it lies in the area, in another core's region."""
        owner = self.owner(address)
        return owner is not None and owner != core


def stacks_problem(base: int, words: int, count: int) -> str | None:
    """Why these numbers are no stack declaration (one phrase), or None when they are one: the
    base is a data address, words and count at least 1, and the area ends within the addresses."""
    if not 0 <= base <= ADS_MAX:
        return f"stack base {base} out of range 0..{ADS_MAX}"
    if not 1 <= words <= ADDRESSES:
        return f"stack words {words} out of range 1..{ADDRESSES}"
    if not 1 <= count <= ADDRESSES:
        return f"stack count {count} out of range 1..{ADDRESSES}"
    if base + words * count > ADDRESSES:
        return f"stack area {base}..{base + words * count - 1} runs past the last address {ADS_MAX}"
    return None


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
    stacks: Stacks | None = None     # declared per-core stack regions, if any
    debug: DebugInfo | None = None   # lines and variables (compile -g), if any

    # -- views the simulator needs -------------------------------------------------------------
    def image(self, kind: str) -> list[int]:
        """The flat image of all segments of one kind (zeros in the gaps), from address 0."""
        img = [0] * self.top(kind)
        for s in self.segments:
            if s.kind == kind:
                img[s.addr:s.addr + len(s.words)] = s.words
        return img

    def top(self, kind: str) -> int:
        """One past the highest address of the segments of one kind: the image's size, found
        without building it (a check before allocating)."""
        return max((s.addr + len(s.words) for s in self.segments if s.kind == kind), default=0)

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
        if self.stacks is not None:
            out.append("stacks {} {} {}".format(*self.stacks))
        for name in sorted(self.symbols):
            s = self.symbols[name]
            out.append(f"symbol {s.name} {s.value} {s.kind}")
        for seg in self.segments:
            out.append(f"{seg.kind} {seg.addr}")
            for i in range(0, len(seg.words), WORDS_PER_LINE):
                out.append(" ".join(f"{w & 0xFFFFFFFF:08x}" for w in seg.words[i:i + WORDS_PER_LINE]))
        if self.debug is not None:
            d = self.debug
            out.append(f"source {d.file}")
            out += [f"func {f.name} {f.line} {f.lo} {f.body} {f.hi} {f.frame} {f.params}" for f in d.funcs]
            out += [f"var {v.scope or '-'} {v.name} {v.kind} {v.where}" + (f" {v.words}" if v.kind == "mem" else "")
                    for v in d.vars]
            out += [f"line {pc} {line}" for pc, line in d.rows]
        return "\n".join(out) + "\n"

    @classmethod
    def from_text(cls, text: str, filename: str = "<object>") -> "Program":
        prog = cls()
        seg: Segment | None = None
        seen_magic = False
        for lineno, raw in enumerate(text.splitlines(), 1):
            line = raw.split(";", 1)[0].strip()
            # A file name may hold spaces and ';': the rest of the line, as to_text writes it.
            if raw.startswith("source ") and seen_magic:
                if prog.debug is not None:
                    raise S2mcError(f"{filename}:{lineno}: bad object file: source named twice: "
                                    f"'{excerpt(raw.strip())}'")
                prog.debug = DebugInfo(raw[len("source "):])
                continue
            if not line:
                continue

            def fail(msg: str) -> S2mcError:
                return S2mcError(f"{filename}:{lineno}: bad object file: {msg}: '{excerpt(raw.strip())}'")

            def number(text: str, lo: int, hi: int, what: str) -> int:
                if not _DECIMAL.fullmatch(text) or (lo >= 0 and text.startswith("-")):
                    raise fail("malformed number")
                # Compare the digit count first: int() refuses more than 4300 digits.
                if len(text.lstrip("-").lstrip("0")) > 12 or not lo <= int(text) <= hi:
                    raise fail(f"{what} out of range {lo}..{hi}")
                return int(text)

            parts = line.split()
            if not seen_magic:
                if parts != [MAGIC, str(VERSION)]:
                    raise fail(f"expected '{MAGIC} {VERSION}' on the first line")
                seen_magic = True
                continue
            head = parts[0]
            if head == "entry" and len(parts) == 2:
                prog.entry = number(parts[1], 0, ADS_MAX, "entry")
            elif head == "stacks" and len(parts) == 4:
                if prog.stacks is not None:
                    raise fail("stacks declared twice")
                # Each number is checked alone first (plain decimal, bounded digits), then together.
                values = [number(t, lo, hi, what) for t, lo, hi, what in
                          zip(parts[1:], (0, 1, 1), (ADS_MAX, ADDRESSES, ADDRESSES),
                              ("stack base", "stack words", "stack count"))]
                problem = stacks_problem(*values)
                if problem:
                    raise fail(problem)
                prog.stacks = Stacks(*values)
            elif head == "symbol" and len(parts) == 4:
                name, value, kind = parts[1:]
                if kind not in SYMBOL_KINDS:
                    raise fail(f"symbol kind must be one of {', '.join(SYMBOL_KINDS)}")
                if not is_symbol_name(name, kind):
                    raise fail(f"'{excerpt(name)}' is not a {kind} symbol name the assembler accepts")
                if name in prog.symbols:
                    raise fail(f"symbol '{excerpt(name)}' defined twice")
                lo, hi = (VALUE_MIN, VALUE_MAX) if kind == "const" else (0, ADDRESSES)
                prog.symbols[name] = Symbol(name, number(value, lo, hi, f"{kind} symbol value"), kind)
            elif head in ("code", "data") and len(parts) == 2:
                seg = Segment(head, number(parts[1], 0, ADS_MAX, f"{head} address"))
                prog.segments.append(seg)
            elif head in ("func", "var", "line"):
                _debug_line(prog, parts, fail, number)
            elif all(_is_word(p) for p in parts):
                if seg is None:
                    raise fail("words before any 'code' or 'data' line")
                if seg.addr + len(seg.words) + len(parts) > ADDRESSES:
                    raise fail(f"{seg.kind} segment runs past the last address {ADS_MAX}")
                seg.words.extend(_signed32(int(p, 16)) for p in parts)
            else:
                raise fail("unrecognised line")
        if not seen_magic:
            raise S2mcError(f"{filename}: bad object file: empty (expected '{MAGIC} {VERSION}')")
        _check_canonical(text, prog.to_text(), filename)
        return prog


def _check_canonical(text: str, canonical: str, filename: str) -> None:
    """The loader is exact: a file whose values are all valid still loads only when it is, line for
    line, what `to_text` writes (no comment, blank line, extra space, leading zero, short word line
    or reordered symbol: the assembler never writes them, so they are edits or damage)."""
    if text == canonical:
        return
    got, want = text.split("\n"), canonical.split("\n")
    i = next((i for i, (a, b) in enumerate(zip(got, want)) if a != b), min(len(got), len(want)))
    where = f"{filename}:{i + 1}: bad object file: not as the assembler writes it"
    if i >= len(got):   # the text is a prefix of what it should be: the last newline is missing
        raise S2mcError(f"{filename}:{i}: bad object file: not as the assembler writes it "
                        "(the last line has no newline)")
    if i >= len(want) - 1:   # the assembler's text has ended (lines follow its last newline)
        at = len(want) - 1
        raise S2mcError(f"{filename}:{at + 1}: bad object file: not as the assembler writes it "
                        f"(expected the end of the file): '{excerpt(got[at])}'")
    raise S2mcError(f"{where} (expected '{excerpt(want[i])}'): '{excerpt(got[i])}'")


def _debug_line(prog: Program, parts: list[str], fail, number) -> None:
    """One func, var or line line of an object file into prog.debug."""
    d = prog.debug
    if d is None:
        raise fail("debug information before its 'source' line")
    head = parts[0]
    if head == "func" and len(parts) == 8:
        if not is_symbol_name(parts[1], "code"):
            raise fail(f"'{excerpt(parts[1])}' is not a function name")
        line, lo, body, hi, frame, params = (number(t, 0, ADDRESSES, w) for t, w in
                                             zip(parts[2:], ("line", "pc", "pc", "pc", "frame", "params")))
        if not lo <= body <= hi:
            raise fail("a function's pcs must be first <= body <= end")
        d.funcs.append(Func(parts[1], line, lo, body, hi, frame, params))
    elif head == "var" and len(parts) in (5, 6):
        scope, name, kind = parts[1:4]
        if kind not in VAR_KINDS or (kind == "mem") != (len(parts) == 6):
            raise fail(f"a variable's place is reg N, frame N or mem ADDRESS WORDS")
        if not NAME.fullmatch(name) or (scope != "-" and not NAME.fullmatch(scope)):
            raise fail(f"'{excerpt(name)}' is not a variable name")
        lo, hi = {"reg": (0, 31), "frame": (-ADDRESSES, ADDRESSES), "mem": (0, ADS_MAX)}[kind]
        where = number(parts[4], lo, hi, f"{kind} place")
        words = number(parts[5], 1, ADDRESSES, "words") if kind == "mem" else 1
        d.vars.append(Var(None if scope == "-" else scope, name, kind, where, words))
    elif head == "line" and len(parts) == 3:
        pc, line = number(parts[1], 0, ADS_MAX, "pc"), number(parts[2], 0, ADDRESSES, "line")
        if d.rows and pc <= d.rows[-1][0]:
            raise fail("line table rows must come in increasing pc order")
        d.rows.append((pc, line))
    else:
        raise fail("unrecognised line")


def _is_word(text: str) -> bool:
    return len(text) == 8 and all(c in "0123456789abcdef" for c in text)


def _signed32(v: int) -> int:
    v &= 0xFFFFFFFF
    return v - (1 << 32) if v >> 31 else v
