"""S2 disassembler: words back to assembly text that reassembles to the same words."""
from __future__ import annotations

from .instructions import decode, encode
from .program import Program


def disassemble_word(word: int) -> str:
    """One word as assembly that reassembles to exactly this word: an instruction where the word is
    the canonical encoding of one, otherwise `.word 0x...` (an undefined opcode, or bits in fields
    the instruction does not use, which the assembler would write as zeros)."""
    word &= 0xFFFFFFFF
    d = decode(word)
    if d.ins is None:
        return f".word 0x{word:08x}  ; undefined opcode"
    regs = iter((d.r1, d.r2, d.r3))
    out, fields, imm = [d.ins.mnemonic], [], 0
    for want in d.ins.shape.split():
        if want in ("r", "+r"):
            fields.append(next(regs))
            out.append(f"{want[:-1]}r{fields[-1]}")
        elif want in ("a", "@d", "#m", "#n"):
            imm = d.imm
            out.append(f"{want[:-1]}{imm}")      # the shape's prefix ('', '@' or '#'), then the value
        elif want == "#t":
            fields.append(next(regs))  # the trap number sits in the next register field (r2)
            out.append(f"#{fields[-1]}")
    text = " ".join(out)
    fields += [0] * (3 - len(fields))
    if encode(d.ins, *fields, imm) & 0xFFFFFFFF != word:
        return f".word 0x{word:08x}  ; {text}, with bits set in unused fields"
    return text


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
            # pop: where segments overlap, a label is written once (twice would not reassemble)
            for name in sorted(labels.pop((seg.kind, addr), [])):
                out.append(f":{name}")
            text = disassemble_word(w) if seg.kind == "code" else str(w)
            out.append(f"  {text:<28}; {addr}")
    out.append(".end")
    return "\n".join(out) + "\n"
