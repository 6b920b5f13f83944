"""Random S2 programs for differential tests (reference model vs engines).

Programs always stay inside a small data window unless they mean to fault, and loops have bounded
trip counts, so they halt unless the cycle limit is part of the test. A strategy draws a list of
"chunks" (small instruction groups) that each keep those invariants.
"""
from __future__ import annotations

from hypothesis import strategies as st

WINDOW = 64          # data addresses used: 0..WINDOW-1 (plus push/pop stack at 100..)
ALU = ["add", "sub", "mul", "div", "and", "or", "xor", "eq", "ne", "lt", "le", "gt", "ge", "shl", "shr", "mod"]
REGS = [f"r{i}" for i in range(0, 8)]   # r0 included: writes to it must vanish
BASE = "r8"                             # address register, always masked into the window
COUNTER = "r9"                          # loop counter, never used elsewhere
SP = "r10"                              # stack pointer for push/pop

reg = st.sampled_from(REGS)
imm17 = st.one_of(st.integers(-(1 << 16), (1 << 16) - 1), st.sampled_from([0, 1, -1, 31, 32, 33, -65536, 65535]))
imm22 = st.one_of(st.integers(-(1 << 21), (1 << 21) - 1), st.sampled_from([-(1 << 21), (1 << 21) - 1, 0, -1]))


@st.composite
def chunk(draw, depth=0):
    kind = draw(st.sampled_from(["alu_r", "alu_i", "mov", "mem", "mem", "stack", "xchg", "print", "cid",
                                 "sync", "branch"] + (["loop"] if depth == 0 else [])))
    d, a, b = draw(reg), draw(reg), draw(reg)
    if kind == "alu_r":
        op = draw(st.sampled_from(ALU))
        if op in ("div", "mod"):   # mostly guard the divisor; sometimes let it fault
            guard = draw(st.booleans()) or draw(st.integers(0, 9)) > 0
            if guard:
                return [f"or r11 {b} #1", f"{op} {d} {a} r11"]
        return [f"{op} {d} {a} {b}"]
    if kind == "alu_i":
        op = draw(st.sampled_from(ALU))
        n = draw(imm17)
        if op in ("div", "mod") and n == 0 and draw(st.integers(0, 9)) > 0:
            n = 7
        return [f"{op} {d} {a} #{n}"]
    if kind == "mov":
        return [f"mov {d} #{draw(imm22)}"] if draw(st.booleans()) else [f"mov {d} {a}", f"not {b} {a}"]
    if kind == "mem":
        off = draw(st.integers(0, WINDOW - 1))
        form = draw(st.sampled_from(["abs", "disp", "index"]))
        op = draw(st.sampled_from(["ld", "st"]))
        if form == "abs":
            return [f"{op} {d} {off}"]
        mask = [f"and {BASE} {a} #{WINDOW // 2 - 1}"]
        if form == "disp":
            return mask + [f"{op} {d} @{draw(st.integers(0, WINDOW // 2))} {BASE}"]
        return mask + [f"mov r12 #{draw(st.integers(0, WINDOW // 2 - 1))}", f"{op} {d} +{BASE} r12"]
    if kind == "stack":
        return [f"push {SP} {a}", f"pop {SP} {d}"] if draw(st.booleans()) else [f"push {SP} {a}", f"add {d} {SP} #0", f"pop {SP} {b}"]
    if kind == "xchg":
        return [f"and {BASE} {a} #{WINDOW - 1}", f"xchg {d} {BASE}"]
    if kind == "print":
        return [f"trap {a} #1"] if draw(st.booleans()) else [f"mov r13 #{draw(st.integers(33, 126))}", "trap r13 #2"]
    if kind == "cid":
        return [f"cid {d}", f"ncore {a}"]
    if kind == "sync":
        return ["sync"]
    if kind == "branch":   # skip the next chunk depending on a register (core-dependent via cid)
        body = draw(chunk(depth + 1))
        label = draw(st.uuids()).hex[:8]
        jop = draw(st.sampled_from(["jt", "jf"]))
        return [f"{jop} {a} skip{label}"] + body + [f":skip{label}"]
    # bounded loop; the body is straight-line chunks
    n = draw(st.integers(1, 4))
    body = [ins for c in draw(st.lists(chunk(depth + 1), min_size=1, max_size=4)) for ins in c]
    label = draw(st.uuids()).hex[:8]
    return [f"mov {COUNTER} #{n}", f":loop{label}"] + body + [f"sub {COUNTER} {COUNTER} #1", f"jt {COUNTER} loop{label}"]


@st.composite
def programs(draw, max_chunks=12):
    body = [ins for c in draw(st.lists(chunk(), min_size=1, max_size=max_chunks)) for ins in c]
    # Every core gets its own push/pop stack region above the window.
    prologue = ["cid r10", "mul r10 r10 #16", "add r10 r10 #100"]
    data = draw(st.lists(st.integers(-(1 << 31), (1 << 31) - 1), min_size=WINDOW, max_size=WINDOW))
    words = " ".join(str(w) for w in data)
    return "\n".join([".code 0", *prologue, *body, "trap r0 #0", ".data 0", words, ".end"]) + "\n"


configs = st.fixed_dictionaries({
    "cores": st.integers(1, 5),
    "mem_latency": st.integers(1, 4),
    "arbitration": st.sampled_from(["fifo", "fixed", "round_robin"]),
})
