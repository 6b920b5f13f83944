"""Code generation: checked Rz AST -> S2 assembly text (docs/rz.md, "Code generation").

Convention (both levels): r0 zero; retval r28, fp r29, rads r30, sp r31. Arguments are pushed on
the sp stack left to right (`push sp rX`) and popped by the callee right after its prologue (last
parameter first). The return address is saved at @0 fp of the callee's frame; frames grow upward.
Locals live in registers (params first); a function saves the callee-saved registers it writes.

-O0 (like the original compiler): every register r1..r27 is callee-saved; locals are r1..rk in
order, temporaries follow; constants are loaded with mov; every function saves all registers it
uses and rads; loops test at the top; results are copied with mov.
-O1: r1..r19 are callee-saved, r20..r27 scratch (a call may clobber them). Leaf functions keep
locals and temporaries in scratch registers and need no frame at all; non-leaf functions keep
locals in callee-saved registers and temporaries in scratch ones unless they must survive a call.
Expressions are evaluated straight into their destination; immediates and displacement/absolute
addressing replace materialised constants; loops test at the bottom; conditions branch directly.
The optimiser then removes redundant loads, stores, moves and jumps (optimiser.peephole).
The instructions are the IR of ir.py; compile() in __init__.py runs the passes in order.
"""
from __future__ import annotations

import weakref

from s2mc.isa.instructions import ADS_MAX, IMM_MAX, IMM_MIN, MOV_MAX, MOV_MIN

from . import astnodes as A
from .errors import CompileError
from .ir import (ALL_O0, ARG_REGS, FP, RADS, RETVAL, SAVED_O1, SCRATCH_O1, SP, SPECIAL, FrameSlot,
                 Ins)
from .layout import DATA_BASE, MemoryMap, layout
from .nesting import deep
from .semantic import ASM_REF

ALU = {"+": "add", "-": "sub", "*": "mul", "/": "div", "%": "mod", "&": "and", "|": "or",
       "^": "xor", "==": "eq", "!=": "ne", "<": "lt", "<=": "le", ">": "gt", ">=": "ge",
       "<<": "shl", ">>": "shr"}
COMMUTATIVE = {"+", "*", "&", "|", "^", "==", "!="}
MIRROR = {"<": ">", ">": "<", "<=": ">=", ">=": "<="}


class _OutOfRegisters(Exception):
    pass


def fits_imm(v: int) -> bool:
    return IMM_MIN <= v <= IMM_MAX


_HAS_CALL: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()   # node -> has_call(node)


def has_call(e) -> bool:
    """Does evaluating e call a user function (and so clobber scratch registers and retval)?
    Asked at every level of an expression, so the answers for the whole subtree are computed
    once, children first, and kept (a nested expression would otherwise cost quadratic time)."""
    known = _HAS_CALL.get(e)
    if known is not None:
        return known
    order, stack = [], [e]
    while stack:
        n = stack.pop()
        if n not in _HAS_CALL:
            order.append(n)
            stack.extend(A.children(n))
    for n in reversed(order):                  # every child before its parent
        _HAS_CALL[n] = ((isinstance(n, A.Call) and not n.builtin)
                        or any(_HAS_CALL[c] for c in A.children(n)))
    return _HAS_CALL[e]


class FunctionGen:
    def __init__(self, cg: "CodeGen", fn: A.Function, n_reg_locals: int):
        self.cg, self.fn, self.opt = cg, fn, cg.opt
        self.code: list[Ins] = []
        self.leaf = not fn.calls
        self.home: dict[str, object] = {}        # local -> register name or FrameSlot
        self.used_saved: set[str] = set()
        self.live: set[str] = set()              # temporaries in use
        locs = fn.locals
        self.regargs = self.opt >= 1 and len(fn.params) <= len(ARG_REGS)
        fixed: dict[str, str] = {}
        if self.opt == 0:
            pool = list(ALL_O0)
            self.saved_set = set(ALL_O0)
        elif self.leaf:
            if self.regargs:                       # parameters stay where the caller put them
                fixed = {p: ARG_REGS[i] for i, p in enumerate(fn.params)}
            pool = [r for r in SCRATCH_O1 + SAVED_O1 if r not in fixed.values()]
            self.saved_set = set(SAVED_O1)
        else:
            pool = list(SAVED_O1)
            self.saved_set = set(SAVED_O1)
        others = [n for n in locs if n not in fixed]
        n_reg = min(n_reg_locals, len(others), len(pool))
        self.n_spill = 0
        self.home.update(fixed)
        for i, name in enumerate(others):
            if i < n_reg:
                self.home[name] = pool[i]
                if pool[i] in self.saved_set:
                    self.used_saved.add(pool[i])
            else:
                self.home[name] = FrameSlot(self, "spill", self.n_spill)
                self.n_spill += 1
        taken = set(pool[:n_reg]) | set(fixed.values())
        if self.opt == 0:
            self.free_saved = [r for r in ALL_O0 if r not in taken]
            self.free_scratch = []
        else:
            self.free_saved = [r for r in SAVED_O1 if r not in taken]
            self.free_scratch = [r for r in SCRATCH_O1 if r not in taken]
        # A leaf function with a loop rotates its temporaries through every free register, so
        # that loaded values survive longer for the optimiser to reuse (saving the extra
        # callee-saved registers costs two accesses per call, repaid by any loop).
        self.rotate_all = (self.opt >= 1 and self.leaf
                           and any(isinstance(n, A.While) for n in A.walk(fn)))
        if self.rotate_all:
            self.free_scratch += self.free_saved
            self.free_saved = []
        self.exit_label = cg.new_label()
        # main never called by anyone: the startup code needs nothing preserved
        self.save_nothing = self.opt >= 1 and fn.name == "main" and not cg.main_is_called
        self.frame_regs: list[str] = []
        self.line: int | None = None             # the statement being generated (debug info)

    # -- frame -------------------------------------------------------------------------------
    @property
    def moves_fp(self) -> bool:
        return self.opt == 0 or not self.leaf

    def slot_disp(self, kind: str, index: int) -> int:
        """Spill slots sit at old fp + 1 + j, saved registers after them; rads at new fp."""
        m, k = self.n_spill, len(self.frame_regs)
        offset = 1 + index if kind == "spill" else 1 + m + index
        return offset - (m + k + 1) if self.moves_fp else offset

    # -- registers ---------------------------------------------------------------------------
    def alloc(self, cls: str = "any") -> str:
        if self.opt >= 1 and cls == "any" and self.free_scratch:
            r = self.free_scratch.pop(0)
        elif self.free_saved:
            r = min(self.free_saved, key=lambda x: int(x[1:]))
            self.free_saved.remove(r)
        elif self.free_scratch and (cls == "any" or self.opt == 0):
            r = self.free_scratch.pop(0)
        else:
            raise _OutOfRegisters               # the caller retries with fewer register locals
        if r in self.saved_set:
            self.used_saved.add(r)
        self.live.add(r)
        return r

    def release(self, *regs) -> None:
        for r in regs:
            if r in self.live:
                self.live.remove(r)
                if self.opt >= 1 and (r in SCRATCH_O1 or self.rotate_all):
                    self.free_scratch.append(r)
                else:
                    self.free_saved.append(r)

    def target(self, dest, cls: str) -> str:
        return dest if dest is not None else self.alloc(cls)

    def emit(self, op: str, *args, mem=None, comment: str = "", line=...) -> None:
        self.code.append(Ins(op, args, mem, comment, self.line if line is ... else line))

    def label(self, name: str) -> None:
        self.code.append(Ins("label", [name]))

    def load_const(self, reg: str, v: int) -> None:
        if MOV_MIN <= v <= MOV_MAX:
            self.emit("mov", reg, f"#{v}")
        else:
            self.emit("mov", reg, f"#{v >> 16}")
            self.emit("shl", reg, reg, "#16")
            if v & 0xFFFF:
                self.emit("or", reg, reg, f"#{v & 0xFFFF}")

    # -- function ----------------------------------------------------------------------------
    def generate(self) -> list[Ins]:
        body = self.code
        self.block(self.fn.body)
        self.emit("mov", RETVAL, "r0", comment="falling off the end returns 0", line=None)
        self.code = []
        saved = [] if self.save_nothing else sorted(self.used_saved, key=lambda r: int(r[1:]))
        self.frame_regs = saved
        m, k = self.n_spill, len(saved)
        size = self.frame_size = m + k + 1
        pro, epi = [], []
        for i, r in enumerate(saved):
            pro.append(Ins("st", [r, f"@{1 + m + i}", FP]))  # old fp: fp has not moved yet
        if self.moves_fp:
            pro.append(Ins("add", [FP, FP, f"#{size}"]))
            pro.append(Ins("st", [RADS, "@0", FP], comment="save the return address"))
        params = self.fn.params
        for i, p in enumerate(params if self.regargs else []):
            h = self.home[p]
            if isinstance(h, FrameSlot):
                pro.append(Ins("st", [ARG_REGS[i], h, FP], comment=f"parameter {p}"))
            elif h != ARG_REGS[i]:
                pro.append(Ins("mov", [h, ARG_REGS[i]], comment=f"parameter {p}"))
        for p in reversed(params if not self.regargs else []):
            h = self.home[p]
            if isinstance(h, FrameSlot):      # retval is free until the body runs
                pro.append(Ins("pop", [SP, RETVAL], comment=f"parameter {p}"))
                pro.append(Ins("st", [RETVAL, h, FP]))
                continue
            pro.append(Ins("pop", [SP, h], comment=f"parameter {p}"))
        if self.moves_fp:
            epi.append(Ins("ld", [RADS, "@0", FP]))
            epi.append(Ins("sub", [FP, FP, f"#{size}"]))
        for i, r in reversed(list(enumerate(saved))):
            epi.append(Ins("ld", [r, f"@{1 + m + i}", FP]))  # old fp: fp is back
        epi.append(Ins("ret", [RADS]))
        homes = ", ".join(f"{n}={h}" for n, h in self.home.items()) or "none"
        head = [Ins("label", [self.fn.name]),
                Ins("asm", [f"; {self.fn.name}({', '.join(params)})  locals: {homes}"])]
        for ins in head + pro:                   # the entry code belongs to the function's line
            ins.line, ins.prologue = self.fn.line, True
        return head + pro + body + [Ins("label", [self.exit_label])] + epi

    # -- statements --------------------------------------------------------------------------
    def block(self, stmts) -> None:
        for s in stmts:
            self.statement(s)

    def statement(self, s) -> None:
        outer, self.line = self.line, s.line
        try:
            self._statement(s)
        finally:
            self.line = outer

    def _statement(self, s) -> None:
        if isinstance(s, A.Assign):
            self.assign(s)
        elif isinstance(s, A.If):
            else_label, end = self.cg.new_label(), self.cg.new_label()
            self.branch(s.cond, else_label, False)
            self.block(s.then)
            if s.else_:
                self.emit("jmp", end, line=None)      # no statement of its own: steps pass it
                self.label(else_label)
                self.block(s.else_)
                self.label(end)
            else:
                self.label(else_label)
        elif isinstance(s, A.While):
            top, test, end = self.cg.new_label(), self.cg.new_label(), self.cg.new_label()
            if self.opt == 0:
                self.label(top)
                self.branch(s.cond, end, False)
                self.block(s.body)
                self.emit("jmp", top, line=None)
                self.label(end)
            else:
                self.emit("jmp", test)
                self.label(top)
                self.block(s.body)
                self.label(test)
                self.branch(s.cond, top, True)
        elif isinstance(s, A.Return):
            if s.value is None:
                self.emit("mov", RETVAL, "r0")
            elif self.opt == 0:
                r = self.expr(s.value)
                self.emit("mov", RETVAL, r)
                self.release(r)
            else:
                self.expr(s.value, dest=RETVAL)
            self.emit("jmp", self.exit_label)
        elif isinstance(s, A.Print):
            self.print_(s)
        elif isinstance(s, A.ExprStmt):
            self.release(self.expr(s.expr, value=False))
        else:  # pragma: no cover
            raise AssertionError(s)

    def print_(self, s: A.Print) -> None:
        def char(c: str) -> None:
            t = self.alloc()
            self.emit("mov", t, f"#{ord(c)}")
            self.emit("trap", t, "#2")
            self.release(t)
            if self.opt >= 1 and self.free_scratch and self.free_scratch[-1] == t:
                self.free_scratch.insert(0, self.free_scratch.pop())   # reuse it for the next

        for i, a in enumerate(s.args):
            if i:
                char(" ")
            if isinstance(a, A.Str):
                for c in a.value:
                    char(c)
            else:
                r = self.expr(a)
                self.emit("trap", r, "#1")
                self.release(r)
        char("\n")

    def assign(self, s: A.Assign) -> None:
        t = s.target
        if isinstance(t, A.Name) and t.kind == "local":
            h = self.home[t.name]
            if isinstance(h, FrameSlot):
                r = self.expr(s.value)
                self.emit("st", r, h, FP, mem=("f", ("slot", h)))
                self.release(r)
            elif self.opt == 0:
                r = self.expr(s.value)
                self.emit("mov", h, r)
                self.release(r)
            else:
                self.expr(s.value, dest=h)
            return
        if isinstance(t, A.Name):
            r = self.expr(s.value)
            self.emit("st", r, t.name, mem=(f"g:{t.name}", ("abs", t.name)))
            self.release(r)
            return
        cls = "saved" if has_call(s.value) else "any"
        operands, regs, mem = self.address_mode(t, cls)
        r = self.expr(s.value)
        self.emit("st", r, *operands, mem=mem)
        self.release(r, *regs)

    # -- conditions --------------------------------------------------------------------------
    def branch(self, e, label: str, when: bool) -> None:
        """Jump to label if bool(e) == when; fall through otherwise."""
        if isinstance(e, A.Binary) and e.op in ("&&", "||"):
            short = (e.op == "||") == when      # the left operand alone can decide the jump
            if short:
                self.branch(e.left, label, when)
                self.branch(e.right, label, when)
            else:
                skip = self.cg.new_label()
                self.branch(e.left, skip, not when)
                self.branch(e.right, label, when)
                self.label(skip)
            return
        if self.opt >= 1:
            if isinstance(e, A.Num):
                if bool(e.value) == when:
                    self.emit("jmp", label)
                return
            if isinstance(e, A.Unary) and e.op == "!":
                self.branch(e.operand, label, not when)
                return
            if (isinstance(e, A.Binary) and e.op in ("==", "!=") and isinstance(e.right, A.Num)
                    and e.right.value == 0):
                r = self.expr(e.left)
                self.emit("jt" if (e.op == "!=") == when else "jf", r, label)
                self.release(r)
                return
        r = self.expr(e)
        self.emit("jt" if when else "jf", r, label)
        self.release(r)

    # -- addresses ---------------------------------------------------------------------------
    def address_mode(self, e, cls: str):
        """Operands addressing the lvalue e (Index or *p): (operands, regs to release, mem)."""
        if isinstance(e, A.Index) and e.base.kind == "array":
            name = e.base.name
            base = self.cg.map.addresses[name]
            region = f"a:{name}"
            idx, c = e.index, 0
            if self.opt >= 1:
                if isinstance(idx, A.Num) and 0 <= base + idx.value <= ADS_MAX:
                    a = base + idx.value
                    return [name if idx.value == 0 else str(a)], [], (region, ("abs", a))
                if isinstance(idx, A.Binary) and idx.op in "+-" and isinstance(idx.right, A.Num):
                    c = idx.right.value if idx.op == "+" else -idx.right.value
                    idx = idx.left
            ri = self.expr(idx, cls=cls)
            d = base + c
            if fits_imm(d):
                return [f"@{name}" if c == 0 else f"@{d}", ri], [ri], (region, ("disp", d, ri))
            t = self.alloc(cls)
            self.load_const(t, d)
            return [f"+{t}", ri], [t, ri], (region, None)
        if isinstance(e, A.Index):               # a scalar used as a pointer: p[i] == *(p + i)
            rp = self.expr(e.base, cls="saved" if has_call(e.index) else cls)
            if self.opt >= 1 and isinstance(e.index, A.Num) and fits_imm(e.index.value):
                return [f"@{e.index.value}", rp], [rp], ("p", ("disp", e.index.value, rp))
            ri = self.expr(e.index, cls=cls)
            return [f"+{rp}", ri], [rp, ri], ("p", ("idx", rp, ri))
        assert isinstance(e, A.Unary) and e.op == "*"
        p, c = e.operand, 0
        if (self.opt >= 1 and isinstance(p, A.Binary) and p.op in "+-" and isinstance(p.right, A.Num)
                and fits_imm(p.right.value if p.op == "+" else -p.right.value)):
            c = p.right.value if p.op == "+" else -p.right.value
            p = p.left
        rp = self.expr(p, cls=cls)
        return [f"@{c}", rp], [rp], ("p", ("disp", c, rp))

    def address_of(self, o, dest, cls):
        if isinstance(o, A.Name):                 # a global scalar or array
            t = self.target(dest, cls)
            addr = self.cg.map.addresses[o.name]
            if MOV_MIN <= addr <= MOV_MAX:
                self.emit("mov", t, f"#{o.name}")
            else:
                self.load_const(t, addr)
            return t
        if isinstance(o, A.Unary):                # &*p == p
            return self.expr(o.operand, cls=cls, dest=dest)
        if o.base.kind == "array":
            base = self.cg.map.addresses[o.base.name]
            if self.opt >= 1 and isinstance(o.index, A.Num):
                t = self.target(dest, cls)
                self.load_const(t, base + o.index.value)
                return t
            ri = self.expr(o.index)
            self.release(ri)
            t = self.target(dest, cls)
            if fits_imm(base):
                self.emit("add", t, ri, f"#{o.base.name}")
            else:
                t2 = self.alloc()
                self.load_const(t2, base)
                self.emit("add", t, ri, t2)
                self.release(t2)
            return t
        rp = self.expr(o.base, cls="saved" if has_call(o.index) else "any")
        ri = self.expr(o.index)
        self.release(rp, ri)
        t = self.target(dest, cls)
        self.emit("add", t, rp, ri)
        return t

    # -- expressions -------------------------------------------------------------------------
    def expr(self, e, cls: str = "any", dest: str | None = None, value: bool = True) -> str:
        """Evaluate e; the result is in dest if given, else in the returned register (release it
        when done: it may be a temporary, a local's home, r0 or retval)."""
        if self.opt == 0 and dest is not None:
            r = self.expr(e, cls)
            self.emit("mov", dest, r)
            self.release(r)
            return dest
        if isinstance(e, A.Num):
            if self.opt >= 1 and e.value == 0 and dest is None:
                return "r0"
            t = self.target(dest, cls)
            self.load_const(t, e.value)
            return t
        if isinstance(e, A.Name):
            if e.kind == "local":
                h = self.home[e.name]
                if isinstance(h, FrameSlot):
                    t = self.target(dest, cls)
                    self.emit("ld", t, h, FP, mem=("f", ("slot", h)))
                    return t
                if dest is not None and dest != h:
                    self.emit("mov", dest, h)
                    return dest
                return h
            if e.kind == "array":
                return self.address_of(e, dest, cls)
            t = self.target(dest, cls)
            self.emit("ld", t, e.name, mem=(f"g:{e.name}", ("abs", e.name)))
            return t
        if isinstance(e, A.Index) or (isinstance(e, A.Unary) and e.op == "*"):
            operands, regs, mem = self.address_mode(e, cls)
            self.release(*regs)
            t = self.target(dest, cls)
            self.emit("ld", t, *operands, mem=mem)
            return t
        if isinstance(e, A.Unary):
            if e.op == "&":
                return self.address_of(e.operand, dest, cls)
            r = self.expr(e.operand)
            if e.op != "~" or self.opt >= 1:
                self.release(r)
            if e.op == "-":
                t = self.target(dest, cls)
                self.emit("sub", t, "r0", r)
            elif e.op == "!":
                t = self.target(dest, cls)
                self.emit("eq", t, r, "r0" if self.opt == 0 else "#0")
            else:  # ~
                if self.opt == 0:
                    m = self.alloc()
                    self.load_const(m, -1)
                    self.release(m, r)
                    t = self.target(dest, cls)
                    self.emit("xor", t, r, m)
                else:
                    t = self.target(dest, cls)
                    self.emit("xor", t, r, "#-1")
            return t
        if isinstance(e, A.Binary):
            if e.op in ("&&", "||"):
                false, end = self.cg.new_label(), self.cg.new_label()
                self.branch(e, false, False)
                t = self.target(dest, cls)
                self.emit("mov", t, "#1")
                self.emit("jmp", end)
                self.label(false)
                self.emit("mov", t, "#0")
                self.label(end)
                return t
            op, left, right = e.op, e.left, e.right
            if self.opt >= 1 and isinstance(left, A.Num) and not isinstance(right, A.Num):
                if op in COMMUTATIVE:
                    left, right = right, left
                elif op in MIRROR:
                    op, left, right = MIRROR[op], right, left
            if self.opt >= 1 and isinstance(right, A.Num) and fits_imm(right.value):
                rl = self.expr(left)
                self.release(rl)
                t = self.target(dest, cls)
                self.emit(ALU[op], t, rl, f"#{right.value}")
                return t
            rl = self.expr(left, cls="saved" if has_call(right) else "any")
            rr = self.expr(right)
            if self.opt == 0:
                self.release(rl, rr)
                t = self.target(dest, cls)
            else:
                t = self.target(dest, cls)
                self.release(rl, rr)
            self.emit(ALU[op], t, rl, rr)
            return t
        if isinstance(e, A.Call):
            return self.call(e, cls, dest, value)
        raise AssertionError(e)  # pragma: no cover

    def call(self, e: A.Call, cls, dest, value) -> str:
        if e.builtin:
            if e.name in ("cid", "ncore"):
                t = self.target(dest, cls)
                self.emit(e.name, t)
                return t
            if e.name in ("sync", "fence"):
                self.emit(e.name)
                return "r0"
            self.inline_asm(e.args[0])
            return "r0"
        callee = self.cg.prog.function(e.name)
        if self.opt >= 1 and len(callee.params) <= len(ARG_REGS):
            self.register_args(e.args)
        else:
            for a in e.args:
                r = self.expr(a)
                self.emit("push", SP, r)
                self.release(r)
        self.emit("jal", RADS, e.name)
        if not value:
            return "r0"
        if self.opt >= 1 and dest is None and cls == "any":
            return RETVAL
        t = self.target(dest, cls)
        if t != RETVAL:
            self.emit("mov", t, RETVAL)
        return t

    def take(self, reg: str) -> None:
        if reg not in self.free_scratch:          # cannot happen: no scratch value lives across
            raise AssertionError(f"{reg} busy")   # the evaluation of a call (see has_call)
        self.free_scratch.remove(reg)
        self.live.add(reg)

    def register_args(self, args) -> None:
        """-O1: argument i goes to r(20+i). Arguments that must survive a later argument's call
        wait in callee-saved temporaries; the others are evaluated straight into place."""
        last_call = max((i for i, a in enumerate(args) if has_call(a)), default=-1)
        held = []
        for i, a in enumerate(args):
            if i < last_call:
                held.append(self.expr(a, cls="saved"))
            elif i == last_call:
                r = self.expr(a)
                if r != ARG_REGS[i]:
                    self.take(ARG_REGS[i])
                    self.emit("mov", ARG_REGS[i], r)
                    self.release(r)
            else:
                self.take(ARG_REGS[i])
                self.expr(a, dest=ARG_REGS[i])
        for i, r in enumerate(held):
            self.take(ARG_REGS[i])
            self.emit("mov", ARG_REGS[i], r)
            self.release(r)
        self.release(*ARG_REGS[:len(args)])

    def inline_asm(self, s: A.Str) -> None:
        def sub(m):
            name = m.group(1)
            h = self.home.get(name)
            if h is None:
                return name                     # a global: its label is its address
            if isinstance(h, FrameSlot):
                raise CompileError(self.cg.filename, s.line, s.col,
                                   f"asm refers to local '{name}', but it had to be kept in "
                                   "memory (too many locals); use fewer locals")
            return h
        for line in ASM_REF.sub(sub, s.value).splitlines():
            if line.strip():   # the comment is the string's place: compile() reports errors there
                self.code.append(Ins("asm", [line.strip()], comment=(s.line, s.col), line=self.line))


class CodeGen:
    def __init__(self, prog: A.Program, opt: int, filename: str):
        self.prog, self.opt, self.filename = prog, opt, filename
        self.map: MemoryMap = layout(prog.globals)
        self.labels = 0
        self.homes: dict[str, dict[str, str]] = {}   # function -> local -> "rN" or "@D" (from fp)
        self.frames: dict[str, int] = {}             # function -> words its entry code moves fp up
        self.main_is_called = any(isinstance(n, A.Call) and n.name == "main" for n in A.walk(prog))

    def new_label(self) -> str:
        self.labels += 1
        return f".L{self.labels}"

    def function(self, fn: A.Function) -> list[Ins]:
        n = len(fn.locals)
        while True:
            start = self.labels
            try:
                gen = FunctionGen(self, fn, n)
                code = gen.generate()
                self.homes[fn.name] = {name: str(h) for name, h in gen.home.items()}
                self.frames[fn.name] = gen.frame_size if gen.moves_fp else 0
                return code
            except _OutOfRegisters:
                self.labels = start
                if n == 0:
                    raise CompileError(self.filename, fn.line, fn.col,
                                       f"function '{fn.name}' has an expression too complex "
                                       "for the 27 registers; split it") from None
                n -= 1

    def startup(self) -> list[Ins]:
        m = self.map
        code = [Ins("label", ["__start"]),
                Ins("cid", [SP], comment="each core finds its stack region"),
                Ins("shl", [SP, SP, f"#{m.stack_words.bit_length() - 1}"])]
        if fits_imm(m.stack_base):
            code.append(Ins("add", [SP, SP, f"#{m.stack_base}"]))
        else:
            code += [Ins("mov", [RADS, f"#{m.stack_base}"]), Ins("add", [SP, SP, RADS])]
        code += [Ins("add", [FP, SP, f"#{m.argstack_words}"]),
                 Ins("jal", [RADS, "main"]),
                 Ins("trap", ["r0", "#0"])]
        return code

    def data(self) -> list[str]:
        out = []
        for g in self.prog.globals:
            addr = self.map.addresses[g.name]
            out.append(f".data {addr}")
            words = g.init or ([0] if g.size is None else [])
            if not words:
                out.append(f":{g.name}")
            for i in range(0, len(words), 16):
                chunk = " ".join(str(w) for w in words[i:i + 16])
                out.append(f":{g.name} {chunk}" if i == 0 else f"  {chunk}")
        out += [f".data {self.map.stack_base}", ":__stack", f".data {self.map.heap}", ":__heap"]
        return out


class Generated:
    """The code generator's output: each function's instructions in the IR (for the peephole pass
    to rewrite), rendered with the startup code and data as one assembly text."""

    def __init__(self, cg: CodeGen, functions: list[list[Ins]]):
        self.cg, self.functions = cg, functions

    def render(self, debug: bool = False) -> str:
        """The assembly text; with `debug`, also the directives that carry the line table and
        the variables' places (docs/isa.md, "Debug information"): the same instructions."""
        cg, m = self.cg, self.cg.map
        globals_ = f"globals {DATA_BASE}..{m.data_end - 1}" if m.data_end > DATA_BASE else "no globals"
        lines = [f"; compiled by s2mc from {cg.filename} at -O{cg.opt}",
                 f"; memory map: {globals_}, stacks {m.stack_base}.."
                 f"{m.heap - 1} ({m.max_cores} cores x {m.stack_words} words), heap {m.heap}..",
                 # the simulator faults stack_overflow when a core touches another core's region
                 f".stacks __stack {m.stack_words} {m.max_cores}",
                 ".symbol"]
        lines += [f"  {name} {num}" for name, num in SPECIAL.items()]
        lines += cg.data()
        if debug:
            lines.append(f'.file "{_file_name(cg.filename)}"')
            lines += [f".var {g.name} {g.name} {1 if g.size is None else g.size}" for g in cg.prog.globals]
        lines.append(".code 0")
        lines += [i.render() for i in cg.startup()]
        for fn, code in zip(cg.prog.functions, self.functions):
            if not debug:
                lines += [i.render() for i in code]
                continue
            lines.append(f".func {fn.name} {fn.line} {cg.frames[fn.name]} {len(fn.params)}")
            lines += [f"  .var {name} {home}" for name, home in cg.homes[fn.name].items()]
            line, entry = ..., True
            for ins in code:
                if ins.op != "label":
                    if entry and not ins.prologue:
                        lines.append("  .body")
                        entry = False
                    if ins.line != line:
                        lines.append(f"  .line {ins.line or 0}")
                        line = ins.line
                lines.append(ins.render())
        lines.append(".end")
        return "\n".join(lines) + "\n"


def _file_name(name: str) -> str:
    """The source's name as a .file directive can quote it (no quote, no comment mark)."""
    return "".join("_" if c in '";\n' else c for c in name)


@deep   # expr/statement recurse per AST level (nesting.py)
def generate(prog: A.Program, opt: int = 1, filename: str = "<input>") -> Generated:
    """The IR of a checked program, one instruction list per function (not yet optimised)."""
    cg = CodeGen(prog, opt, filename)
    return Generated(cg, [cg.function(fn) for fn in prog.functions])


__all__ = ["generate", "Generated"]
