"""Generate docs/isa.md from the instruction table (a test checks the file is current).

Usage: python -m s2mc.isa.gen_docs > docs/isa.md
"""
from __future__ import annotations

from .instructions import INSTRUCTIONS, TRAPS, X_OPCODE

BUS_TEXT = {
    "none": "-",
    "read": "1 read",
    "write": "1 write",
    "swap": "1 read + 1 write",
    "string": "1 read (a string)",
    "trap": "by number",
}

HEADER = """# The S2 ISA as s2mc implements it

Generated from the instruction table `isa/instructions.toml` by `python -m s2mc.isa.gen_docs`; do
not edit by hand.

S2 is P. Chongstitvatana's 32-bit teaching processor. s2mc uses the *assembly language* of S2
version 3 (grandfather s21) and the documented s21 three-format *encoding*: the flat s23 encoding
was never published. Multicore extensions are ours.

## Machine state
- 32 registers `r0`..`r31`, 32-bit two's complement; `r0` always reads 0 and writes to it vanish.
- Memory is made of 32-bit words, word addressed; there is no byte access.
- Each core has a **private program image** (the program is loaded into every core) and all cores
  share one **data memory** through one bus. Code and data are separate address spaces: `.code`
  segments fill the program image, `.data` segments the shared memory. Jump targets are program
  addresses, load/store addresses are data addresses.

## Formats (bit 31 first)

| format | fields |
|---|---|
| L | `op:5 r1:5 ads:22` |
| D | `op:5 r1:5 r2:5 disp:17` |
| X | `op=31:5 r1:5 r2:5 r3:5 xop:12` |

Immediates: `disp` and ALU `#n` are 17-bit sign-extended (-65536..65535); `mov #m` is 22-bit
sign-extended (-2097152..2097151); absolute addresses and jump targets are 22-bit unsigned.

## Semantics common to all instructions
- Arithmetic wraps modulo 2^32; `/` and `%` truncate toward zero (`%` takes the dividend's sign);
  `INT_MIN / -1` wraps to `INT_MIN` and `INT_MIN % -1` is 0; a zero divisor **faults**.
- Shift counts use the low 5 bits of the operand; `shr` is arithmetic (as in s21).
- Compares write 1 or 0 (signed compares); `not` is logical: 0 becomes -1, anything else 0.
- `push r1 r2` computes a = R[r1]+1, writes M[a] = R[r2], then R[r1] = a;
  `pop r1 r2` reads R[r2] = M[R[r1]], then R[r1] = R[r1]-1 (in that order when r1 = r2).
- `xchg r1 r2` swaps R[r1] and M[R[r2]] in **one** bus access (it counts one read and one write).
- `fence` waits until the core's store buffer is empty (machines with `--consistency tso` or `pso`,
  docs/timing-model.md "Store buffers"); `xchg`, `sync` and every trap wait for it too. Under `sc`
  (the default) there is no store buffer and `fence` takes one cycle.
- Traps (`trap r1 #t`) are listed after the instructions; other trap numbers do nothing.
- Faults stop the whole run with one message naming core, PC, cycle and instruction: undefined
  opcode, PC outside the program, data address outside memory, division by zero, a data access in
  another core's declared stack region (`stack_overflow`, see `.stacks` below), and reaching the
  cycle limit.

## Instructions

`reads` and `writes` are the register fields an instruction may read and change (the compiler's
optimiser takes its read/write sets from them). `bus` is its bus-access class: every class but `-`
is one access of the shared bus, counted in the `mem_reads` / `mem_writes` counters as shown, and
takes the wait for the bus plus L cycles (L = mem_latency, default 2).

| assembly | encoding | reads | writes | bus | semantics | cycles |
|---|---|---|---|---|---|---|
"""

FOOTER = """
`B` in the ALU rows is `#n` (immediate form, format D, opcode 10+i) or `R[r3]` (register form, format
X, xop i), i = add 0, sub 1, mul 2, div 3, and 4, or 5, xor 6, eq 7, ne 8, lt 9, le 10, gt 11, ge 12,
shl 13, shr 14, mod 15. xops 24-28 are s21's interrupt instructions, not implemented.

## Timing

Every instruction takes one cycle except those with a bus class (`ld`, `st`, `push`, `pop`,
`xchg` and `trap #3`), which request the shared bus: they wait until the arbiter grants it, then
hold it for L cycles. `sync` waits at the barrier. docs/timing-model.md states the exact rules and works
through a two-core example.

## Assembly syntax
```
.symbol                 ; name value definitions (constants, register names such as fp 30)
  n 100
.code 0                 ; instructions placed in the program image from address 0
:loop                   ; a label (may also precede an instruction on the same line)
  ld r1 @array r2       ; displacement: M[array + R[r2]]
  ld r3 +r1 r2          ; index: M[R[r1] + R[r2]]
  add r1 r1 #-1         ; immediate
  jt r1 loop
  trap r0 #0
  .word 0xf8000fff      ; a raw word, also in .code (the disassembler writes non-instructions so)
.data 64                ; words placed in shared data memory from address 64
:array 1 2 3 0x10 010   ; decimal or 0x hex; symbols allowed
:table .space 16        ; 16 zero words
.stacks 4096 1024 64    ; 64 per-core stack regions of 1024 words from 4096 (optional, once)
.end
```
Everything is case-insensitive; `;` starts a comment.

- **Numbers** are decimal or `0x` hex, with an optional sign. Leading zeros are allowed and never
  mean octal: `#010`, `.code 010` and `@010` are ten.
- **Addresses** are 22 bits: `.code`/`.data` take 0..4194303 and a segment may not run past 4194303.
- **Errors** say `file:line: message: 'line text'`, one line; quoted text longer than 60 characters is
  cut to an excerpt that gives the full length, and control characters are escaped.
- **Files** are UTF-8 (a leading byte-order mark is ignored); other bytes are an error naming the line.
- **Stacks**: `.stacks BASE WORDS COUNT` declares COUNT stack regions of WORDS words from BASE (numbers
  or symbols, labels included): core c owns BASE + c×WORDS .. BASE + (c+1)×WORDS − 1. The simulator
  then faults `stack_overflow` when a core's data access (`ld`, `st`, `push`, `pop`, `xchg`,
  `trap #3`) lies in the area of all the regions but outside the core's own: a stack grown past its
  end into the next core's, or one core reading another's. Accesses outside the area are not
  affected, and a program that declares nothing runs exactly as without the directive; the check
  costs no cycle (docs/timing-model.md, rule 6). WORDS and COUNT are at least 1 and the area must end
  by 4194303. The Rz compiler declares its 256 stacks of 4096 words (docs/rz.md).
- The disassembler's output reassembles to the same words: a word that is no instruction (an undefined
  opcode) or would not come back as itself (bits set in fields the instruction ignores) is written
  as `.word 0x...` with the instruction it resembles in a comment. Jumps, loads and stores name
  their label where one marks exactly that address, runs of zero data words become `.space N`, and
  labels of addresses that hold no word (an Rz array) are defined in empty segments at the end.

## Object format (`.obj`)
A small, line-oriented text format that round-trips exactly (`load(write(p)) == p`):
```
s2obj 1                     ; magic and version
entry 0                     ; first instruction of every core
stacks 4096 1024 64         ; only when declared: base, words, count
symbol array 64 data        ; name, value, kind: code | data | const (sorted by name)
code 0                      ; a program-image segment and its load address
2840000a 10820040 ...       ; 8-digit hex words, at most 8 per line
data 64                     ; a shared-memory segment
00000001 00000002 ...
```
Data symbols are how a host puts inputs in and reads outputs out (`Machine.write("array", ...)`).
The loader accepts exactly what the assembler can write: plain decimal numbers, the entry and segment
addresses within 0..4194303, no segment past 4194303, symbol names the assembler accepts, each once,
constants within -2^31..2^32-1, at most one `stacks` line within the limits of `.stacks`.
docs/reliability.md lists the guarantees and the fuzz tests behind them.

## Debug information
`s2mc compile -g` (and `s2mc debug prog.rz`, which compiles with it) adds directives that say which
Rz line each instruction comes from and where each variable lives; the assembler keeps them in the
Program (`program.debug`, `isa/debuginfo.py`) and the object file carries them, so `s2mc debug`
speaks Rz on a `.rz`, on its `.s` and on its `.obj` alike. They change no instruction.
```
.file "prog.rz"         ; the source file's name (quoted; no " or ; in it)
.var table table 4      ; outside a .func: a global, its data label and its size in words
.code 0
.func weigh 5 0 2       ; a function from here (declared at line 5; its entry code moves fp up 0
                        ; words: a leaf keeps its caller's; 2 parameters, its first 2 .vars) to
                        ; the next .func or the end
  .var v r20            ;   a local in a register, or in the word at fp + D: .var s @-2
:weigh
  .body                 ; its body starts here (after the entry code that saves registers)
  .line 6               ; the instructions from here on come from line 6 (0: of no line)
  mul r22 r20 r21
```
In the object file they come last, only when present (so a program without them writes the object
it always did):
```
source prog.rz                ; the file name (the rest of the line)
func weigh 5 6 6 10 0 2       ; name, line, first pc, body's first pc, one past the last, frame,
                              ; parameters
var - table mem 257 4         ; function (- for a global), name, reg N | frame D | mem ADDRESS WORDS
var weigh v reg 20
line 6 6                      ; the line table: from pc 6 on, line 6 (increasing pcs)
```
"""


def _encoding(ins) -> str:
    if ins.fmt == "X":
        return f"X op={X_OPCODE} xop={ins.code}"
    return f"{ins.fmt} op={ins.code}"


def _syntax(ins) -> str:
    out, n = [ins.mnemonic], 0
    for tok in ins.shape.split():
        if tok in ("r", "+r"):
            n += 1
            out.append(tok.replace("r", f"r{n}"))
        elif tok == "@d":
            out.append("@d")
        else:
            out.append({"a": "ads"}.get(tok, tok))
    return "`" + " ".join(out) + "`"


def _cycles(ins_or_trap) -> str:
    if getattr(ins_or_trap, "key", "") == "fence":
        return "1 + store-buffer drain wait"
    if getattr(ins_or_trap, "kind", "") == "sync":
        return "1 + barrier wait"
    if ins_or_trap.bus == "trap":
        return "that of the trap number"
    return "1" if ins_or_trap.bus == "none" else "bus wait + L"


def _cell(text: str) -> str:
    return text.replace("|", chr(92) + "|")


def render() -> str:
    rows = [f"| {_syntax(i)} | {_encoding(i)} | {', '.join(i.reads) or '-'} | {', '.join(i.writes) or '-'} "
            f"| {BUS_TEXT[i.bus]} | {_cell(i.semantics)} | {_cycles(i)} |" for i in INSTRUCTIONS]
    traps = ["", "### Traps", "", "| trap | name | bus | semantics | cycles |", "|---|---|---|---|---|"]
    traps += [f"| `trap r1 #{t.number}` | {t.name} | {BUS_TEXT[t.bus]} | {_cell(t.semantics)} | {_cycles(t)} |"
              for t in TRAPS.values()]
    return HEADER + "\n".join(rows + traps) + "\n" + FOOTER


if __name__ == "__main__":
    print(render(), end="")
