"""Random S2 programs for differential tests (reference model vs engines).

Programs always stay inside a small data window unless they mean to fault, and loops have bounded
trip counts, so they halt unless the cycle limit is part of the test. A strategy draws a list of
"chunks" (small instruction groups) that each keep those invariants.

The op lists come from the ISA table (s2mc.isa.instructions), selected by shape, group, operand
roles and bus class, so a new instruction lands in the chunk that fits it; test_s2gen.py checks
that the generator produces every encoding and every trap number of the table.
"""
from __future__ import annotations

from hypothesis import strategies as st

from s2mc.isa.instructions import INSTRUCTIONS, TRAPS


def _ops(kind: str, shape: str, **roles) -> list[str]:
    """Mnemonics of the table rows with this group and operand shape (and these roles/bus class)."""
    return [i.mnemonic for i in INSTRUCTIONS if i.kind == kind and i.shape == shape
            and all(getattr(i, k) == v for k, v in roles.items())]


ALU = _ops("alu", "r r r")                          # register form; every one has an immediate form
ALU_IMM = _ops("alu", "r r #n")
FAULTS_ON_ZERO = ["div", "mod"]                     # a zero divisor faults: mostly guarded
MOVE_IMM = _ops("alu", "r #m")                       # mov
UNARY = _ops("alu", "r r")                           # mov, not
CORE_INFO = _ops("alu", "r", reads=())               # cid, ncore
NOPS = _ops("misc", "")                              # nop
# sync; fence waits for the store buffer, a one-cycle no-op under sc: drawn with the nops
FENCES = [i.mnemonic for i in INSTRUCTIONS if i.kind == "sync" and i.shape == "" and i.key == "fence"]
BARRIERS = [m for m in _ops("sync", "") if m not in FENCES]
# Loads and stores, by addressing form.
MEMORY = {form: [i.mnemonic for i in INSTRUCTIONS if i.bus in ("read", "write") and i.shape == shape]
          for form, shape in (("abs", "r a"), ("disp", "r @d r"), ("index", "r +r r"))}
STACK = {i.bus: i.mnemonic for i in INSTRUCTIONS if i.kind == "mem" and i.shape == "r r"
         and i.bus in ("read", "write")}             # write: push, read: pop
SWAPS = _ops("mem", "r r", bus="swap")               # xchg
BRANCHES = _ops("jump", "r a", reads=("r1",))        # jt, jf
CALLS = _ops("jump", "r a", writes=("r1",))          # jal
JUMPS = _ops("jump", "a")                            # jmp
RETURNS = _ops("jump", "r", reads=("r1",))           # ret
TRAP = _ops("trap", "r #t")[0]
TRAP_NUMBER = {t.name: t.number for t in TRAPS.values()}

WINDOW = 64          # data addresses used: 0..WINDOW-1 (plus push/pop stack at 100.., strings at 300..)
REGS = [f"r{i}" for i in range(0, 8)]   # r0 included: writes to it must vanish
BASE = "r8"                             # address register, always masked into the window
COUNTER = "r9"                          # loop counter, never used elsewhere
SP = "r10"                              # stack pointer for push/pop
LINK = "r14"                            # return address of a subroutine chunk

reg = st.sampled_from(REGS)
imm17 = st.one_of(st.integers(-(1 << 16), (1 << 16) - 1), st.sampled_from([0, 1, -1, 31, 32, 33, -65536, 65535]))
imm22 = st.one_of(st.integers(-(1 << 21), (1 << 21) - 1), st.sampled_from([-(1 << 21), (1 << 21) - 1, 0, -1]))


@st.composite
def chunk(draw, depth=0):
    kind = draw(st.sampled_from(["alu_r", "alu_i", "mov", "mem", "mem", "stack", "xchg", "print", "cid",
                                 "sync", "branch", "nop"] + (["loop", "call"] if depth == 0 else [])))
    d, a, b = draw(reg), draw(reg), draw(reg)
    if kind == "alu_r":
        op = draw(st.sampled_from(ALU))
        if op in FAULTS_ON_ZERO:   # mostly guard the divisor; sometimes let it fault
            guard = draw(st.booleans()) or draw(st.integers(0, 9)) > 0
            if guard:
                return [f"or r11 {b} #1", f"{op} {d} {a} r11"]
        return [f"{op} {d} {a} {b}"]
    if kind == "alu_i":
        op = draw(st.sampled_from(ALU_IMM))
        n = draw(imm17)
        if op in FAULTS_ON_ZERO and n == 0 and draw(st.integers(0, 9)) > 0:
            n = 7
        return [f"{op} {d} {a} #{n}"]
    if kind == "mov":
        if draw(st.booleans()):
            return [f"{draw(st.sampled_from(MOVE_IMM))} {d} #{draw(imm22)}"]
        return [f"{op} {x} {a}" for op, x in zip(UNARY, [d, b] * len(UNARY))]
    if kind == "mem":
        off = draw(st.integers(0, WINDOW - 1))
        form = draw(st.sampled_from(sorted(MEMORY)))
        op = draw(st.sampled_from(MEMORY[form]))
        if form == "abs":
            return [f"{op} {d} {off}"]
        mask = [f"and {BASE} {a} #{WINDOW // 2 - 1}"]
        if form == "disp":
            return mask + [f"{op} {d} @{draw(st.integers(0, WINDOW // 2))} {BASE}"]
        return mask + [f"mov r12 #{draw(st.integers(0, WINDOW // 2 - 1))}", f"{op} {d} +{BASE} r12"]
    if kind == "stack":
        push, pop = STACK["write"], STACK["read"]
        return [f"{push} {SP} {a}", f"{pop} {SP} {d}"] if draw(st.booleans()) else [f"{push} {SP} {a}", f"add {d} {SP} #0", f"{pop} {SP} {b}"]
    if kind == "xchg":
        return [f"and {BASE} {a} #{WINDOW - 1}", f"{draw(st.sampled_from(SWAPS))} {d} {BASE}"]
    if kind == "print":
        what = draw(st.sampled_from(["print_int", "print_char", "print_str"]))
        c = draw(st.integers(33, 126))
        if what == "print_int":
            return [f"{TRAP} {a} #{TRAP_NUMBER[what]}"]
        if what == "print_char":
            return [f"mov r13 #{c}", f"{TRAP} r13 #{TRAP_NUMBER[what]}"]
        # a one-character string in this core's own two words at 300 + 2 * core id
        return ["cid r12", "shl r12 r12 #1", "add r12 r12 #300", f"mov r13 #{c}", "st r13 @0 r12",
                "st r0 @1 r12", f"{TRAP} r12 #{TRAP_NUMBER[what]}"]
    if kind == "cid":
        return [f"{op} {x}" for op, x in zip(CORE_INFO, [d, a] * len(CORE_INFO))]
    if kind == "sync":
        return [draw(st.sampled_from(BARRIERS))]
    if kind == "nop":
        return [draw(st.sampled_from(NOPS + FENCES))]
    if kind == "branch":   # skip the next chunk depending on a register (core-dependent via cid)
        body = draw(chunk(depth + 1))
        label = draw(st.uuids()).hex[:8]
        jop = draw(st.sampled_from(BRANCHES))
        return [f"{jop} {a} skip{label}"] + body + [f":skip{label}"]
    if kind == "call":     # a subroutine called once, placed after a jump around it
        body = [ins for c in draw(st.lists(chunk(depth + 1), min_size=1, max_size=3)) for ins in c]
        label = draw(st.uuids()).hex[:8]
        return ([f"{draw(st.sampled_from(CALLS))} {LINK} sub{label}", f"{draw(st.sampled_from(JUMPS))} end{label}",
                 f":sub{label}"] + body + [f"{draw(st.sampled_from(RETURNS))} {LINK}", f":end{label}"])
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
    "arbitration": st.sampled_from(["fifo", "fixed", "round_robin", "burst4"]),
})

#: Protocols and cache shapes (lines, ways, words per line) for the equality suites: tiny caches,
#: so that evictions, write-backs and false sharing happen in short random programs.
PROTOCOLS = ["msi", "mesi", "moesi", "dragon"]
CACHE_SHAPES = [(1, 1, 1), (2, 1, 1), (2, 1, 2), (2, 1, 4), (4, 2, 2), (4, 4, 1), (8, 2, 4), (64, 2, 4)]


@st.composite
def cache_configs(draw, protocols=tuple(PROTOCOLS)):
    """A machine configuration with caches on (docs/timing-model.md, "Caches and coherence")."""
    lines, ways, words = draw(st.sampled_from(CACHE_SHAPES))
    return {**draw(configs), "cache": draw(st.sampled_from(list(protocols))), "cache_lines": lines,
            "cache_ways": ways, "line_words": words, "cache_hit_latency": draw(st.sampled_from([1, 1, 2, 3]))}


@st.composite
def buffered_configs(draw, cached=False):
    """A machine configuration with store buffers (docs/timing-model.md, "Store buffers"): small
    buffers, so that full-buffer stalls happen in short random programs; with caches when `cached`."""
    base = draw(cache_configs()) if cached else draw(configs)
    return {**base, "consistency": draw(st.sampled_from(["tso", "pso"])),
            "store_buffer_entries": draw(st.sampled_from([1, 2, 3, 4, 8]))}
