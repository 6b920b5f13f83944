"""S2 disassembler: words back to assembly text that reassembles to the same words."""
from __future__ import annotations

from .instructions import decode
from .program import Program


def disassemble_word(word: int) -> str:
    d = decode(word)
    if d.ins is None:
        return f".word 0x{word & 0xFFFFFFFF:08x}  ; undefined opcode"
    regs = iter((d.r1, d.r2, d.r3))
    out = [d.ins.mnemonic]
    for want in d.ins.shape.split():
        if want == "r":
            out.append(f"r{next(regs)}")
        elif want == "+r":
            out.append(f"+r{next(regs)}")
        elif want == "a":
            out.append(str(d.imm))
        elif want == "@d":
            out.append(f"@{d.imm}")
        elif want in ("#m", "#n"):
            out.append(f"#{d.imm}")
        elif want == "#t":
            next(regs)  # r1 printed already; the trap number sits in the r2 field
            out.append(f"#{d.r2}")
    return " ".join(out)


def disassemble(prog: Program) -> str:
    """A listing that is itself valid assembly: data as words, code as instructions, labels kept."""
    labels: dict[tuple[str, int], list[str]] = {}
    for s in prog.symbols.values():
        if s.kind in ("code", "data"):
            labels.setdefault((s.kind, s.value), []).append(s.name)
    consts = [s for s in prog.symbols.values() if s.kind == "const"]
    out = []
    if consts:
        out.append(".symbol")
        out += [f"  {s.name} {s.value}" for s in sorted(consts, key=lambda s: s.name)]
    for seg in prog.segments:
        out.append(f".{seg.kind} {seg.addr}")
        for i, w in enumerate(seg.words):
            addr = seg.addr + i
            for name in sorted(labels.get((seg.kind, addr), [])):
                out.append(f":{name}")
            text = disassemble_word(w) if seg.kind == "code" else str(w)
            out.append(f"  {text:<28}; {addr}")
    out.append(".end")
    return "\n".join(out) + "\n"
