"""The -O1 optimiser: constant folding on the AST, then peephole passes on each function's code.

fold(program) — a new AST with constant subexpressions folded (32-bit semantics, division by a
constant zero left for run time), algebraic identities applied (x+0, x*1, x|0, x<<0, ...; x*0
and x&0 only when x has no call), `(x + c1) + c2` reassociated, `if` on a constant reduced to
one branch, `while (0)` removed, and statements after a `return` dropped.

peephole(code) — on one function's instruction list (ir.Ins), repeated to a fixed point:
  * redundant loads: within an extended basic block, a load from a location whose value a
    register already holds becomes a move (or nothing); a store of the value already there goes;
    stores invalidate what they may alias (same global, same array, anything for pointers);
    calls, labels, sync, fence, xchg and asm forget everything;
  * redundant moves: `mov r r`, a constant reloaded into the register that holds it, and copies
    (`mov a b`: later reads of a read b instead, within a block; the move then dies);
  * dead code: an instruction without side effects whose result no path reads (liveness);
  * jumps: a jump to a short epilogue (at most TAIL_MAX instructions ending in ret) is replaced
    by a copy of it, a jump to the next instruction goes, `jf r L1; jmp L2; :L1` becomes `jt r L2; :L1`,
    jumps to jumps are threaded, unreachable code after jmp/ret goes, unused labels go.
Like a C compiler without `volatile`, loads of shared memory are only reused within a block with
no label: a loop that waits for another core re-reads memory on every iteration.

Which registers an instruction reads and writes, and whether it has effects beyond them, comes
from the ISA table through ir.py; this module adds only the calling convention (jal, ret, asm).
"""
from __future__ import annotations

import re

from . import astnodes as A
from .arith import binary, unary, wrap
from .ir import (ALL_O0, ARG_REGS, FP, RADS, RETVAL, SAVED_O1, SCRATCH_O1, SP, SPECIAL,
                 has_no_side_effect, is_reg, read_only_positions, reads_writes)
from .nesting import deep

TAIL_MAX = 6          # longest epilogue copied in place of a jump to it
BARRIERS = {"label", "asm", "sync", "fence", "xchg", "jal", "ret", "jmp"}
SCRATCH = set(SCRATCH_O1) | {RETVAL}


# -- AST folding -------------------------------------------------------------------------------
def _pure(e) -> bool:
    return not any(isinstance(n, A.Call) for n in A.walk(e))


def _num(e, v: int) -> A.Num:
    return A.Num(e.line, e.col, wrap(v))


def fold_expr(e):
    if isinstance(e, A.Index):
        e.index = fold_expr(e.index)
        return e
    if isinstance(e, A.Call):
        e.args = [fold_expr(a) for a in e.args]
        return e
    if isinstance(e, A.Unary):
        e.operand = fold_expr(e.operand)
        o = e.operand
        if isinstance(o, A.Num) and e.op in ("-", "!", "~"):
            return _num(e, unary(e.op, o.value))
        if e.op in ("-", "~") and isinstance(o, A.Unary) and o.op == e.op:
            return o.operand
        return e
    if not isinstance(e, A.Binary):
        return e
    e.left, e.right = fold_expr(e.left), fold_expr(e.right)
    return _fold_binary(e)


def _fold_binary(e):
    """The rules for a Binary whose operands are already folded (never folds them again: a long
    chain would otherwise be re-folded once per constant, quadratic time)."""
    op, l, r = e.op, e.left, e.right
    lc = l.value if isinstance(l, A.Num) else None
    rc = r.value if isinstance(r, A.Num) else None
    if op in ("&&", "||"):
        if lc is not None:
            if (op == "&&") != bool(lc):          # 0 && x, 1 || x
                return _num(e, int(bool(lc)))
            if rc is not None:
                return _num(e, int(bool(rc)))
            return A.Binary(e.line, e.col, "!=", r, _num(e, 0))
        return e
    if lc is not None and rc is not None:
        try:
            return _num(e, binary(op, lc, rc))
        except ZeroDivisionError:
            return e
    if rc is not None:
        if rc == 0 and op in ("+", "-", "|", "^", "<<", ">>"):
            return l
        if rc == 1 and op in ("*", "/"):
            return l
        if rc == 0 and op in ("*", "&") and _pure(l):
            return r
        if op in ("+", "-") and isinstance(l, A.Binary) and l.op in ("+", "-") \
                and isinstance(l.right, A.Num):
            c = (l.right.value if l.op == "+" else -l.right.value) + (rc if op == "+" else -rc)
            return _fold_binary(A.Binary(e.line, e.col, "+", l.left, _num(e, c)))
        if op == "-" and rc != -(1 << 31):
            return A.Binary(e.line, e.col, "+", l, _num(e, -rc))
    if lc is not None:
        if lc == 0 and op in ("+", "|", "^"):
            return r
        if lc == 1 and op == "*":
            return r
        if lc == 0 and op in ("*", "&") and _pure(r):
            return l
    return e


def fold_block(stmts) -> list:
    out = []
    for s in stmts:
        if isinstance(s, A.Assign):
            if not isinstance(s.target, A.Name):
                s.target = fold_expr(s.target)
            s.value = fold_expr(s.value)
        elif isinstance(s, A.If):
            s.cond = fold_expr(s.cond)
            s.then = fold_block(s.then)
            s.else_ = fold_block(s.else_) if s.else_ is not None else None
            if isinstance(s.cond, A.Num):
                out.extend(s.then if s.cond.value else (s.else_ or []))
                continue
        elif isinstance(s, A.While):
            s.cond = fold_expr(s.cond)
            s.body = fold_block(s.body)
            if isinstance(s.cond, A.Num) and s.cond.value == 0:
                continue
        elif isinstance(s, A.Return):
            if s.value is not None:
                s.value = fold_expr(s.value)
            out.append(s)
            break
        elif isinstance(s, A.Print):
            s.args = [a if isinstance(a, A.Str) else fold_expr(a) for a in s.args]
        elif isinstance(s, A.ExprStmt):
            s.expr = fold_expr(s.expr)
        out.append(s)
    return out


@deep
def fold(prog: A.Program) -> A.Program:
    """A folded copy of a checked program (the input is left untouched)."""
    prog = A.clone(prog)
    for f in prog.functions:
        f.body = fold_block(f.body)
    return prog


# -- peephole ----------------------------------------------------------------------------------
def _forget_memory(code) -> list:
    """Redundant load/store and constant-move removal within extended basic blocks."""
    out = []
    mem: dict = {}         # address key -> (register holding the value, alias region)
    consts: dict = {}      # register -> the `#constant` it holds

    def kill_reg(r):
        consts.pop(r, None)
        for k in [k for k, (v, _) in mem.items() if v == r or r in k]:
            del mem[k]

    def kill_region(region):
        for k in [k for k, (_, reg) in mem.items()
                  if reg == region or reg == "p" or (region == "p" and reg != "f")]:
            del mem[k]

    for ins in code:
        op, a = ins.op, ins.args
        if op in BARRIERS:
            mem.clear()
            consts.clear()
            out.append(ins)
        elif op == "ld":
            region, key = ins.mem or (None, None)
            dst = a[0]
            if key is not None and key in mem:
                held = mem[key][0]
                if held != dst:
                    out.append(ins.derived("mov", [dst, held], comment="reused load"))
                    kill_reg(dst)
                continue
            out.append(ins)
            kill_reg(dst)
            if key is not None and dst not in key:
                mem[key] = (dst, region)
        elif op == "st":
            region, key = ins.mem or ("p", None)
            if key is not None and key in mem and mem[key][0] == a[0]:
                continue                           # the location already holds this value
            kill_region(region)
            if key is not None:
                mem[key] = (a[0], region)
            out.append(ins)
        elif op == "mov" and a[0] == a[1]:
            continue
        elif op == "mov" and not is_reg(a[1]):
            if consts.get(a[0]) == a[1]:
                continue
            kill_reg(a[0])
            consts[a[0]] = a[1]
            out.append(ins)
        else:
            for r in reads_writes(ins)[1]:
                kill_reg(r)
            out.append(ins)
    return out


def _jumps(code) -> list:
    labels_at: dict[str, int] = {}
    for i, ins in enumerate(code):
        if ins.op == "label":
            labels_at[ins.args[0]] = i

    # first[i]: the first instruction at or after i that is no label (one pass, so that a long
    # run of labels, like the ends of an else-if chain, is not walked again for every jump)
    first = [len(code)] * (len(code) + 1)
    for i in range(len(code) - 1, -1, -1):
        first[i] = first[i + 1] if code[i].op == "label" else i

    def next_real(i):
        return first[min(i, len(code))]

    resolved: dict[str, str] = {}

    def resolve(lbl):
        """Where a jump to lbl ends up after a chain of jumps (in a loop of jumps: the first label
        met twice). A loop with the answers remembered: nested if-else chains are long."""
        path, seen = [], set()
        while lbl not in resolved:
            i = labels_at.get(lbl)
            if i is None:
                break
            if lbl in seen:
                return lbl                     # a loop of jumps: nothing to remember
            seen.add(lbl)
            path.append(lbl)
            j = next_real(i + 1)
            if not (j < len(code) and code[j].op == "jmp"):
                break
            lbl = code[j].args[0]
        final = resolved.get(lbl, lbl)
        resolved.update(dict.fromkeys(path, final))
        return final

    def short_tail(lbl):
        """The instructions after lbl up to a ret, if there are few and no labels among them."""
        i = labels_at.get(lbl)
        if i is None:
            return None
        start = next_real(i + 1)    # past the labels at the same place (an else-if chain's ends)
        tail = []
        for ins in code[start:start + 1 + TAIL_MAX]:
            if ins.op in ("label", "asm"):
                return None
            tail.append(ins)
            if ins.op == "ret":
                return tail
        return None

    out = []
    i = 0
    while i < len(code):
        ins = code[i]
        if ins.op in ("jmp", "jt", "jf"):
            tgt = resolve(ins.args[-1])
            if tgt != ins.args[-1]:
                ins = ins.derived(ins.op, [*ins.args[:-1], tgt], ins.mem, ins.comment)
            tail = short_tail(tgt) if ins.op == "jmp" else None
            if tail is not None:                   # jump to a short epilogue: copy it here
                out.extend(t.derived(t.op, t.args, t.mem, t.comment) for t in tail)
                i += 1
                while i < len(code) and code[i].op not in ("label", "asm"):
                    i += 1
                continue
            j, following = i + 1, set()
            while j < len(code) and code[j].op == "label":
                following.add(code[j].args[0])
                j += 1
            if tgt in following:                   # a jump to the next instruction
                i += 1
                continue
            # jt/jf r L1 ; jmp L2 ; :L1   ->   jf/jt r L2 ; :L1
            if ins.op in ("jt", "jf") and i + 2 < len(code) and code[i + 1].op == "jmp" \
                    and code[i + 2].op == "label" and code[i + 2].args[0] == tgt:
                inv = "jf" if ins.op == "jt" else "jt"
                out.append(ins.derived(inv, [ins.args[0], resolve(code[i + 1].args[0])]))
                i += 2
                continue
        out.append(ins)
        i += 1
        if ins.op in ("jmp", "ret"):               # unreachable until the next label or asm
            while i < len(code) and code[i].op not in ("label", "asm"):
                i += 1
    # unused labels (function entry labels and labels named in asm text are kept)
    used = {ins.args[-1] for ins in out if ins.op in ("jmp", "jt", "jf", "jal")}
    for ins in out:
        if ins.op == "asm":
            used.update(re.findall(r"[A-Za-z_.$][\w.$]*", ins.args[0]))
    used = {u.lower() for u in used}
    return [ins for ins in out if ins.op != "label" or ins.args[0].lower() in used
            or not ins.args[0].startswith(".L")]


def peephole(code) -> list:
    """Optimise one function's code to a fixed point."""
    while True:
        before = [repr(i) for i in code]
        code = _dead_code(_copy_propagate(_forget_memory(_jumps(code))))
        if [repr(i) for i in code] == before:
            return code


# -- copy propagation and dead code ------------------------------------------------------------
SAVED = set(SAVED_O1)
ARGS = set(ARG_REGS)
LIVE_AT_RET = SAVED | {RETVAL, RADS, FP, SP}
ALL_REGS = set(ALL_O0) | set(SPECIAL)
FRAME = {FP, SP, RADS}       # never renamed and never dead


def _uses_defs(ins):
    if ins.op == "jal":
        return ARGS | {"fp", "sp"}, SCRATCH | {"rads", "retval"}
    if ins.op == "asm":
        return ALL_REGS, set()
    if ins.op == "ret":
        return LIVE_AT_RET, set()
    reads, writes = reads_writes(ins)
    return set(reads) - {"r0"}, set(writes) - {"r0"}


def _blocks(code):
    """Basic blocks as (start, end) index ranges and their successor block numbers."""
    starts = {0}
    for i, ins in enumerate(code):
        if ins.op in ("label", "asm"):
            starts.add(i)
        if ins.op in ("jmp", "jt", "jf", "ret", "asm") and i + 1 < len(code):
            starts.add(i + 1)
    starts = sorted(s for s in starts if s < len(code))
    ranges = [(s, e) for s, e in zip(starts, starts[1:] + [len(code)])]
    at = {s: b for b, (s, _) in enumerate(ranges)}
    label_block = {}
    for b, (s, e) in enumerate(ranges):
        for i in range(s, e):
            if code[i].op != "label":
                break
            label_block[code[i].args[0]] = b
    succ = []
    for b, (s, e) in enumerate(ranges):
        last = code[e - 1]
        nxt = [b + 1] if b + 1 < len(ranges) else []
        if last.op == "jmp":
            succ.append([label_block[last.args[0]]] if last.args[0] in label_block else [])
        elif last.op in ("jt", "jf"):
            succ.append(nxt + ([label_block[last.args[-1]]] if last.args[-1] in label_block else []))
        elif last.op == "ret":
            succ.append([])
        else:
            succ.append(nxt)
    return ranges, succ, at


def _liveness(code):
    """live_after[i]: registers whose value instruction i's successors may read."""
    ranges, succ, _ = _blocks(code)
    uses_defs = [_uses_defs(ins) for ins in code]    # once, not once per pass
    live_in = [set() for _ in ranges]
    changed = True
    while changed:
        changed = False
        for b in reversed(range(len(ranges))):
            live = set().union(*(live_in[s] for s in succ[b])) if succ[b] else set()
            s, e = ranges[b]
            for i in range(e - 1, s - 1, -1):
                uses, defs = uses_defs[i]
                live = (live - defs) | uses
            if live != live_in[b]:
                live_in[b] = live
                changed = True
    after = [None] * len(code)
    for b, (s, e) in enumerate(ranges):
        live = set().union(*(live_in[x] for x in succ[b])) if succ[b] else set()
        for i in range(e - 1, s - 1, -1):
            after[i] = live
            uses, defs = uses_defs[i]
            live = (live - defs) | uses
    return after


def _dead_code(code) -> list:
    after = _liveness(code)
    out = []
    for ins, live in zip(code, after):
        if has_no_side_effect(ins):
            _, defs = _uses_defs(ins)
            if defs and not (defs & live) and not (defs & FRAME):
                continue
        out.append(ins)
    return out


def _copy_propagate(code) -> list:
    out = []
    copies: dict[str, str] = {}
    for ins in code:
        if ins.op in BARRIERS:
            copies.clear()
            out.append(ins)
            continue
        slots = read_only_positions(ins)
        if copies and slots:
            args = list(ins.args)
            rename = {}
            for i in slots:
                a = args[i]
                plus = isinstance(a, str) and a.startswith("+")
                reg = a[1:] if plus else a
                if reg in copies and reg not in FRAME:
                    rename[reg] = copies[reg]
                    args[i] = ("+" if plus else "") + copies[reg]
            if rename:
                mem = ins.mem
                if mem is not None and mem[1] is not None:
                    mem = (mem[0], tuple(rename.get(x, x) if isinstance(x, str) else x
                                         for x in mem[1]))
                ins = ins.derived(ins.op, args, mem, ins.comment)
        _, defs = _uses_defs(ins)
        for d in defs:
            for k in [k for k, v in copies.items() if k == d or v == d]:
                del copies[k]
        if ins.op == "mov" and is_reg(ins.args[1]) and ins.args[0] != ins.args[1] \
                and ins.args[0] not in FRAME:
            copies[ins.args[0]] = ins.args[1]
        out.append(ins)
    return out
