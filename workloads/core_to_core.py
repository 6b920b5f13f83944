"""The simulated twin of `s2mc coherence-native --bench core-to-core`: the core-to-core latency matrix
of the S2 machine on a 2D mesh with directory coherence (docs/timing-model.md, "Core-to-core latency
on the mesh").

    from s2mc.workloads import core_to_core
    m = core_to_core.mesh_matrix(4)     # {'cores': 4, 'cycles': [[None, 26.5, ...], ...], 'engine': 'reference'}
    rows = core_to_core.mesh_rows(m, run_id="c2c-1")

For a pair i < j, core i and core j bounce one word (the line of word 0, whose home is tile 0)
as the native ping-pong bounces its flag: core i stores an odd value and spins reading until it sees
the next even one, core j spins until it sees the odd one and answers. The other cores halt at once.
The steady round trip is the difference between a run of 2 round trips and a run of 1 (the first
also pays the cold misses and the program's start); one-way = round trip / 2, in both cells (i, j)
and (j, i). Runs on the fast engine once it simulates a mesh (s2mc.simulator.NETWORK_ENGINES), else on
the reference model.
"""
from __future__ import annotations

from typing import Callable

from s2mc import simulator
from s2mc.common.errors import S2mcError
from s2mc.common.text import matrix_table
from s2mc.isa.assembler import assemble

#: The records' workload name (the native matrix's too).
WORKLOAD = "core_to_core"
#: The machine the matrix is simulated on: caches, a mesh and its directory; every other parameter
#: is the default (docs/timing-model.md).
MACHINE = dict(cache="msi", interconnect="mesh", coherence="directory")
#: The tile whose home holds the bounced line (word 0 is in line 0, and line l lives at home l mod N).
HOME = 0

_SOURCE = """\
; Core-to-core ping-pong: core {a} stores 1, 3, 5, ... to `flag` and waits to read the next even
; number; core {b} waits for each odd number, answers with the next even one and prints the last;
; the rest halt.
.code 0
  cid r1
  mov r7 #0
  mov r8 #{last}
  eq r3 r1 #{a}
  jt r3 ping
  eq r3 r1 #{b}
  jt r3 pong
  jmp done
:ping
  add r4 r7 #1
  st r4 flag
  add r7 r7 #2
:wait0
  ld r5 flag
  ne r5 r5 r7
  jt r5 wait0
  lt r5 r7 r8
  jt r5 ping
  jmp done
:pong
  add r4 r7 #1
:wait1
  ld r5 flag
  ne r5 r5 r4
  jt r5 wait1
  add r7 r7 #2
  st r7 flag
  lt r5 r7 r8
  jt r5 pong
  trap r7 #1            ; the last value, 2 x round trips: every one was answered
:done
  trap r0 #0
.data 0
:flag
  0
.end
"""


def program_text(a: int, b: int, round_trips: int) -> str:
    """The S2 assembly of `round_trips` round trips between cores a (first to store) and b."""
    return _SOURCE.format(a=a, b=b, last=2 * round_trips)


def engine() -> str:
    """The engine that simulates the mesh: the fast one once it can, else the reference model."""
    return "fast" if "fast" in simulator.NETWORK_ENGINES else "reference"


def run_pair(cores: int, a: int, b: int, round_trips: int, **machine) -> simulator.Result:
    """One ping-pong run of cores a and b on a `cores`-tile mesh (`machine`: other parameters)."""
    prog = assemble(program_text(a, b, round_trips), f"core_to_core_{a}_{b}.s")
    cfg = dict(MACHINE, cores=cores, **machine)
    if engine() == "fast":
        return simulator.Machine(prog, engine="fast", **cfg).run()
    return simulator.run_reference(prog, **cfg)


def round_trip_cycles(cores: int, a: int, b: int, **machine) -> int:
    """The steady round trip of a and b in cycles: a run of 2 round trips less a run of 1."""
    return run_pair(cores, a, b, 2, **machine).cycles - run_pair(cores, a, b, 1, **machine).cycles


def mesh_matrix(cores: int, *, step: Callable[[], None] | None = None, **machine) -> dict:
    """The core-to-core matrix of a `cores`-tile mesh: one-way cycles (round trip / 2) per pair, None
    on the diagonal. Returns cores, cycles (the matrix), engine and home. `step` is called per pair."""
    if not 2 <= cores <= simulator.MAX_CORES:
        raise S2mcError(f"core-to-core on the mesh: {cores} cores; the simulated machine has 2..{simulator.MAX_CORES}")
    cyc: list[list[float | None]] = [[None] * cores for _ in range(cores)]
    for i in range(cores):
        for j in range(i + 1, cores):
            cyc[i][j] = cyc[j][i] = round_trip_cycles(cores, i, j, **machine) / 2
            if step:
                step()
    return {"cores": cores, "cycles": cyc, "engine": engine(), "home": HOME}


def mesh_rows(m: dict, *, run_id: str, experiment: str = "coherence_native") -> list[dict]:
    """The records rows of a mesh_matrix: one `core_to_core_cycles` row per off-diagonal cell."""
    n = m["cores"]
    return [dict(run_id=run_id, experiment=experiment, source="sim", platform="s2", workload=WORKLOAD,
                 variant=f"{i}-{j}", engine=m["engine"], cores=n, core=i, bytes=0, cipher="",
                 metric="core_to_core_cycles", value=float(m["cycles"][i][j]))
            for i in range(n) for j in range(n) if i != j]


def format_mesh_matrix(m: dict) -> str:
    """The matrix as a text table, rows and columns named by tile."""
    return matrix_table([f"t{i}" for i in range(m["cores"])], m["cycles"], fmt=lambda x: f"{x:g}",
                        corner="one-way cycles")
