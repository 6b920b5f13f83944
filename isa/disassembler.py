"""S2 disassembler: words back to assembly text that reassembles to the same words."""
from __future__ import annotations

from .instructions import ADS_MAX, decode, encode
from .program import Program, is_symbol_name


def disassemble_word(word: int, names: dict[tuple[str, int], str] | None = None) -> str:
    """One word as assembly that reassembles to exactly this word: an instruction where the word is
    the canonical encoding of one, otherwise `.word 0x...` (an undefined opcode, or bits in fields
    the instruction does not use, which the assembler would write as zeros).

    `names` maps ("code" | "data", address) to a label: a jump's target and a load's or store's
    address (or displacement) are written as that label where it names exactly that address."""
    word &= 0xFFFFFFFF
    d = decode(word)
    if d.ins is None:
        return f".word 0x{word:08x}  ; undefined opcode"
    space = {"jump": "code", "mem": "data"}.get(d.ins.kind)
    regs = iter((d.r1, d.r2, d.r3))
    out, fields, imm = [d.ins.mnemonic], [], 0
    for want in d.ins.shape.split():
        if want in ("r", "+r"):
            fields.append(next(regs))
            out.append(f"{want[:-1]}r{fields[-1]}")
        elif want in ("a", "@d", "#m", "#n"):
            imm = d.imm
            # a label only for addresses: never for an immediate (#), which may be any number
            label = names.get((space, imm)) if names and space and want in ("a", "@d") else None
            out.append(f"{want[:-1]}{label or imm}")   # the shape's prefix ('', '@' or '#'), then the value
        elif want == "#t":
            fields.append(next(regs))  # the trap number sits in the next register field (r2)
            out.append(f"#{fields[-1]}")
    text = " ".join(out)
    fields += [0] * (3 - len(fields))
    if encode(d.ins, *fields, imm) & 0xFFFFFFFF != word:
        return f".word 0x{word:08x}  ; {text}, with bits set in unused fields"
    return text


#: Runs of at least this many zero data words are written as one `.space N` line.
ZERO_RUN = 4


def disassemble(prog: Program) -> str:
    """A listing that is itself valid assembly: data as words, code as instructions, labels kept
    (and used as the operands of jumps, loads and stores), runs of zero data words as `.space N`."""
    labels: dict[tuple[str, int], list[str]] = {}
    for s in prog.symbols.values():
        if s.kind in ("code", "data"):
            labels.setdefault((s.kind, s.value), []).append(s.name)
    consts = [s for s in prog.symbols.values() if s.kind == "const"]
    # An operand may name a label only if the name reads back as that label (not a register or a
    # constant) and it is the only label at that address.
    const_names = {s.name for s in consts}
    names = {key: ns[0] for key, ns in labels.items() if len(ns) == 1 and key[1] <= ADS_MAX
             and is_symbol_name(ns[0], key[0]) and ns[0] not in const_names}
    out = []
    debug = prog.debug
    funcs_at, body_at, rows_at = {}, set(), {}
    if debug is not None:    # the debug information as the directives that make it (docs/isa.md)
        out.append(f'.file "{debug.file}"')
        out += [f".var {v.name} {names.get(('data', v.where), v.where)} {v.words}" for v in debug.globals()]
        funcs_at = {f.lo: f for f in debug.funcs}
        body_at = {f.body for f in debug.funcs}
        rows_at = dict(debug.rows)
    if consts:
        out.append(".symbol")
        out += [f"  {s.name} {s.value}" for s in sorted(consts, key=lambda s: s.name)]
    for seg in prog.segments:
        out.append(f".{seg.kind} {seg.addr}")
        i = 0
        while i < len(seg.words):
            addr = seg.addr + i
            f = funcs_at.get(addr) if seg.kind == "code" else None
            if f is not None:
                out.append(f".func {f.name} {f.line} {f.frame} {f.params}")
                out += [f"  .var {v.name} " + (f"r{v.where}" if v.kind == "reg" else f"@{v.where}")
                        for v in debug.locals(f)]
            # pop: where segments overlap, a label is written once (twice would not reassemble)
            for name in sorted(labels.pop((seg.kind, addr), [])):
                out.append(f":{name}")
            if seg.kind == "code" and addr in body_at:
                out.append("  .body")
            if seg.kind == "code" and addr in rows_at:
                out.append(f"  .line {rows_at[addr]}")
            run = _zero_run(seg, i, labels) if seg.kind == "data" else 0
            if run >= ZERO_RUN:
                out.append(f"  {f'.space {run}':<28}; {addr}..{addr + run - 1}: zeros")
                i += run
                continue
            text = disassemble_word(seg.words[i], names) if seg.kind == "code" else str(seg.words[i])
            out.append(f"  {text:<28}; {addr}")
            i += 1
    if any(key[1] <= ADS_MAX for key in labels):
        # Labels of addresses that hold no word (an Rz array of zeros, say): an empty segment
        # defines them without placing words.
        out.append("; labels outside the segments above")
        for (kind, addr), ns in sorted(labels.items()):
            if addr <= ADS_MAX:
                out.append(f".{kind} {addr}")
                out += [f":{name}" for name in sorted(ns)]
    stacks = getattr(prog, "stacks", None)
    if stacks is not None:
        out.append(f".stacks {stacks.base} {stacks.words} {stacks.count}")
    out.append(".end")
    return "\n".join(out) + "\n"


def _zero_run(seg, i: int, labels) -> int:
    """How many zero words start at index i of a segment without a label inside the run."""
    n = 0
    while i + n < len(seg.words) and seg.words[i + n] == 0 and (
            n == 0 or (seg.kind, seg.addr + i + n) not in labels):
        n += 1
    return n
