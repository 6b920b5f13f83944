"""The S2 instruction table: the single source of truth for the ISA (docs/isa.md).

Everything else is derived from this table: the Python assembler and disassembler, the generated
C++ header the simulators decode with (isa/gen_header.py), and docs/isa.md's encoding column.
Like Spike's riscv-opcodes, one row describes one encoding.

Formats (bit 31 first):
  L  op:5 r1:5 ads:22
  D  op:5 r1:5 r2:5 disp:17
  X  op=31:5 r1:5 r2:5 r3:5 xop:12

Operand shapes (how the assembler reads the operands, and how the disassembler prints them):
  ""        no operands                    nop, sync
  "a"       absolute address / target      jmp ads
  "r a"     register, address              ld r1 ads, jt r1 ads, jal r1 ads
  "r @d r"  register, displacement(reg)    ld r1 @d r2
  "r +r r"  register, index(reg+reg)       ld r1 +r2 r3
  "r #m"    register, 22-bit immediate     mov r1 #m
  "r r #n"  two registers, 17-bit imm      add r1 r2 #n
  "r r r"   three registers                add r1 r2 r3
  "r r"     two registers                  mov r1 r2, push r1 r2, not r1 r2, xchg r1 r2
  "r"       one register                   ret r1, cid r1, ncore r1
  "r #t"    register, trap number          trap r1 #n (n in the r2 field, as in as21)
"""
from __future__ import annotations

from dataclasses import dataclass

X_OPCODE = 31


@dataclass(frozen=True)
class Instr:
    key: str          # unique name of this encoding, e.g. "ld.disp"; C++ enum is OP_<KEY>
    mnemonic: str     # assembly mnemonic shared by the encodings of one instruction
    fmt: str          # "L", "D" or "X"
    code: int         # primary opcode (L, D) or xop (X)
    shape: str        # operand shape, see module docstring
    kind: str         # "alu", "mem", "jump", "trap", "sync", "misc": the timing class
    semantics: str    # one line, for docs/isa.md and the disassembler's --explain


# The ALU operations, in their encoding order: immediate form op = 10 + i, register form xop = i.
ALU_OPS = [
    ("add", "R[r1] = R[r2] + B (mod 2^32)"),
    ("sub", "R[r1] = R[r2] - B (mod 2^32)"),
    ("mul", "R[r1] = R[r2] * B (low 32 bits)"),
    ("div", "R[r1] = R[r2] / B, truncated toward zero; B = 0 faults"),
    ("and", "R[r1] = R[r2] & B"),
    ("or", "R[r1] = R[r2] | B"),
    ("xor", "R[r1] = R[r2] ^ B"),
    ("eq", "R[r1] = (R[r2] == B) ? 1 : 0"),
    ("ne", "R[r1] = (R[r2] != B) ? 1 : 0"),
    ("lt", "R[r1] = (R[r2] < B) ? 1 : 0, signed"),
    ("le", "R[r1] = (R[r2] <= B) ? 1 : 0, signed"),
    ("gt", "R[r1] = (R[r2] > B) ? 1 : 0, signed"),
    ("ge", "R[r1] = (R[r2] >= B) ? 1 : 0, signed"),
    ("shl", "R[r1] = R[r2] << (B & 31)"),
    ("shr", "R[r1] = R[r2] >> (B & 31), arithmetic"),
    ("mod", "R[r1] = R[r2] % B, sign of the dividend; B = 0 faults"),
]


def _table() -> list[Instr]:
    t = [
        Instr("nop", "nop", "L", 0, "", "misc", "no operation"),
        Instr("ld.abs", "ld", "L", 1, "r a", "mem", "R[r1] = M[ads]"),
        Instr("ld.disp", "ld", "D", 2, "r @d r", "mem", "R[r1] = M[disp + R[r2]]"),
        Instr("st.abs", "st", "L", 3, "r a", "mem", "M[ads] = R[r1]"),
        Instr("st.disp", "st", "D", 4, "r @d r", "mem", "M[disp + R[r2]] = R[r1]"),
        Instr("mov.imm", "mov", "L", 5, "r #m", "alu", "R[r1] = m (22-bit sign-extended)"),
        Instr("jmp", "jmp", "L", 6, "a", "jump", "PC = ads"),
        Instr("jal", "jal", "L", 7, "r a", "jump", "R[r1] = PC + 1; PC = ads"),
        Instr("jt", "jt", "L", 8, "r a", "jump", "if R[r1] != 0 then PC = ads"),
        Instr("jf", "jf", "L", 9, "r a", "jump", "if R[r1] == 0 then PC = ads"),
    ]
    for i, (name, sem) in enumerate(ALU_OPS):
        t.append(Instr(f"{name}.imm", name, "D", 10 + i, "r r #n", "alu", sem.replace("B", "n")))
    for i, (name, sem) in enumerate(ALU_OPS):
        t.append(Instr(f"{name}.reg", name, "X", i, "r r r", "alu", sem.replace("B", "R[r3]")))
    t += [
        Instr("mov.reg", "mov", "X", 16, "r r", "alu", "R[r1] = R[r2]"),
        Instr("ld.index", "ld", "X", 17, "r +r r", "mem", "R[r1] = M[R[r2] + R[r3]]"),
        Instr("st.index", "st", "X", 18, "r +r r", "mem", "M[R[r2] + R[r3]] = R[r1]"),
        Instr("ret", "ret", "X", 19, "r", "jump", "PC = R[r1]"),
        Instr("trap", "trap", "X", 20, "r #t", "trap",
              "system call t on R[r1]: 0 halt, 1 print int, 2 print char, 3 print string at R[r1]"),
        Instr("push", "push", "X", 21, "r r", "mem", "R[r1] = R[r1] + 1; M[R[r1]] = R[r2]"),
        Instr("pop", "pop", "X", 22, "r r", "mem", "R[r2] = M[R[r1]]; R[r1] = R[r1] - 1"),
        Instr("not", "not", "X", 23, "r r", "alu", "R[r1] = (R[r2] == 0) ? -1 : 0 (logical)"),
        # Multicore extensions (s2mc's own, numbered from 29 upward; 24-28 are s21's interrupt ops).
        Instr("cid", "cid", "X", 29, "r", "alu", "R[r1] = this core's id (0 .. ncore-1)"),
        Instr("ncore", "ncore", "X", 30, "r", "alu", "R[r1] = number of cores"),
        Instr("sync", "sync", "X", 31, "", "sync", "barrier: wait until every running core has issued sync"),
        Instr("xchg", "xchg", "X", 32, "r r", "mem", "atomically swap R[r1] and M[R[r2]] (one bus access)"),
    ]
    return t


INSTRUCTIONS: list[Instr] = _table()
BY_KEY = {i.key: i for i in INSTRUCTIONS}
BY_MNEMONIC: dict[str, list[Instr]] = {}
for _i in INSTRUCTIONS:
    BY_MNEMONIC.setdefault(_i.mnemonic, []).append(_i)
BY_OPCODE = {i.code: i for i in INSTRUCTIONS if i.fmt != "X"}
BY_XOP = {i.code: i for i in INSTRUCTIONS if i.fmt == "X"}

TRAP_HALT, TRAP_PRINT_INT, TRAP_PRINT_CHAR, TRAP_PRINT_STR = 0, 1, 2, 3

# Field widths and immediate ranges.
ADS_BITS, DISP_BITS = 22, 17
ADS_MAX = (1 << ADS_BITS) - 1                     # absolute addresses and jump targets, unsigned
MOV_MIN, MOV_MAX = -(1 << 21), (1 << 21) - 1      # mov #m, 22-bit signed
IMM_MIN, IMM_MAX = -(1 << 16), (1 << 16) - 1      # disp and ALU #n, 17-bit signed
NUM_REGS = 32


def sign_extend(value: int, bits: int) -> int:
    value &= (1 << bits) - 1
    return value - (1 << bits) if value >> (bits - 1) else value


def encode(ins: Instr, r1: int = 0, r2: int = 0, r3: int = 0, imm: int = 0) -> int:
    """Pack fields into a 32-bit word (imm is the ads, disp or #n field, already range-checked)."""
    if ins.fmt == "L":
        return (ins.code << 27) | (r1 << 22) | (imm & ADS_MAX)
    if ins.fmt == "D":
        return (ins.code << 27) | (r1 << 22) | (r2 << 17) | (imm & ((1 << DISP_BITS) - 1))
    return (X_OPCODE << 27) | (r1 << 22) | (r2 << 17) | (r3 << 12) | ins.code


@dataclass(frozen=True)
class Decoded:
    ins: Instr | None   # None: undefined opcode
    r1: int
    r2: int
    r3: int
    imm: int            # ads (unsigned), mov #m (signed 22), disp/#n (signed 17); 0 for X


def decode(word: int) -> Decoded:
    word &= 0xFFFFFFFF
    op, r1, r2, r3 = word >> 27, (word >> 22) & 31, (word >> 17) & 31, (word >> 12) & 31
    if op == X_OPCODE:
        return Decoded(BY_XOP.get(word & 0xFFF), r1, r2, r3, 0)
    ins = BY_OPCODE.get(op)
    if ins is None:
        return Decoded(None, r1, r2, r3, 0)
    if ins.fmt == "L":
        ads = word & ADS_MAX
        return Decoded(ins, r1, 0, 0, sign_extend(ads, ADS_BITS) if ins.key == "mov.imm" else ads)
    return Decoded(ins, r1, r2, 0, sign_extend(word, DISP_BITS))
