"""Multicore Rz: every core runs main() at once on its own stack; cid/ncore/sync and an xchg
spin lock work on 1-8 cores, at -O0 and -O1, with results checked against Python."""
from __future__ import annotations

from pathlib import Path

import pytest

from s2mc.compiler import compile as compile_rz
from s2mc.simulator import Machine, run

WORKLOADS = Path(__file__).parent.parent / "workloads" / "rz"
CORES = [1, 2, 3, 4, 8]


def compiled(name: str, opt: int):
    return compile_rz((WORKLOADS / f"{name}.rz").read_text(), opt=opt, filename=f"{name}.rz")


@pytest.mark.parametrize("opt", [0, 1])
@pytest.mark.parametrize("cores", CORES)
def test_parallel_sum(cores, opt):
    res = run(compiled("sum", opt).program, cores=cores)
    assert res.output == "sum of 1 .. 1000 = 500500\n"
    assert all(c["instructions"] > 0 for c in res.cores)


@pytest.mark.parametrize("opt", [0, 1])
@pytest.mark.parametrize("cores", CORES)
def test_matrix_multiply(cores, opt):
    n = 16
    a = [i % 7 + 1 for i in range(n * n)]
    b = [i % 5 - 2 for i in range(n * n)]
    want = [sum(a[i * n + k] * b[k * n + j] for k in range(n)) for i in range(n) for j in range(n)]
    m = Machine(compiled("matmul", opt).program, cores=cores)
    res = m.run()
    assert m.read("C", n * n) == want
    check = 0
    for v in want:
        check = ((check * 31 + v + (1 << 31)) & 0xFFFFFFFF) - (1 << 31)
    assert res.output == f"C[0][0] = {want[0]}  C[N-1][N-1] = {want[-1]}  checksum = {check}\n"


@pytest.mark.parametrize("opt", [0, 1])
@pytest.mark.parametrize("cores", CORES)
def test_odd_even_sort(cores, opt):
    m = Machine(compiled("sort", opt).program, cores=cores)
    res = m.run()
    x, data = 12345, []
    for _ in range(64):
        x = (x * 1103515245 + 12345) & 0x7FFFFFFF
        data.append(x % 1000)
    assert m.read("a", 64) == sorted(data)
    assert res.output.startswith("sorted: 1 ")


@pytest.mark.parametrize("opt", [0, 1])
@pytest.mark.parametrize("cores", CORES)
def test_spin_lock_counter_is_exact(cores, opt):
    m = Machine(compiled("spinlock", opt).program, cores=cores)
    res = m.run()
    assert m.read("counter", 1) == [50 * cores]
    assert m.read("lock", 1) == [0]
    assert res.output == f"counter = {50 * cores}  expected = {50 * cores}\n"


@pytest.mark.parametrize("opt", [0, 1])
@pytest.mark.parametrize("cores", CORES)
def test_software_barrier(cores, opt):
    res = run(compiled("barrier", opt).program, cores=cores)
    assert res.output == "every core saw its neighbour's value in every round: 1\n"


@pytest.mark.parametrize("opt", [0, 1])
@pytest.mark.parametrize("cores", [1, 2, 4])
def test_recursion_on_every_core(cores, opt):
    def fib(n):
        a, b = 0, 1
        for _ in range(n):
            a, b = b, a + b
        return a
    res = run(compiled("fib", opt).program, cores=cores)
    assert res.output == "".join(f"core {c} : fib( {20 + c} ) = {fib(20 + c)}\n" for c in range(cores))


IDS = """
out[64], nc[64], order[64], next
main()
  me = cid()
  out[me] = me * me + 1
  nc[me] = ncore()
  sync()
  // after the barrier every core sees every other core's write
  s = 0
  c = 0
  while (c < ncore())
    s = s + out[c]
    c = c + 1
  out[me] = s
  // cores take turns: core k writes its id at position k of `order`
  turn = 0
  while (turn < ncore())
    if (turn == me)
      order[next] = me
      next = next + 1
    sync()
    turn = turn + 1
"""


@pytest.mark.parametrize("opt", [0, 1])
@pytest.mark.parametrize("cores", range(1, 9))
def test_cid_ncore_sync(cores, opt):
    m = Machine(compile_rz(IDS, opt=opt).program, cores=cores)
    m.run()
    total = sum(c * c + 1 for c in range(cores))
    assert m.read("out", cores) == [total] * cores
    assert m.read("nc", cores) == [cores] * cores
    assert m.read("order", cores) == list(range(cores))
    assert m.read("next", 1) == [cores]


def test_stacks_are_private():
    """Deep recursion on 8 cores at once: each core's frames live in its own region."""
    src = """
res[64]
depth(n, k)
  if (n == 0) return k
  return depth(n - 1, k) + 1
main()
  res[cid()] = depth(200 + cid(), cid() * 1000)
"""
    for opt in (0, 1):
        m = Machine(compile_rz(src, opt=opt).program, cores=8)
        m.run()
        assert m.read("res", 8) == [c * 1000 + 200 + c for c in range(8)]


def test_heap_symbol_for_host_inputs():
    """Hosts put data at __heap without recompiling; the program finds it through a global."""
    src = """
data, n, total
main()
  i = 0
  s = 0
  while (i < n)
    s = s + data[i]
    i = i + 1
  total = s
"""
    c = compile_rz(src)
    heap = c.program.address_of("__heap")
    assert heap == c.memory_map.heap
    values = list(range(1, 50001))
    m = Machine(c.program)
    m.write("__heap", values)
    m.write("data", [heap])
    m.write("n", [len(values)])
    m.run()
    total = sum(values)
    assert m.read("total", 1) == [((total + (1 << 31)) & 0xFFFFFFFF) - (1 << 31)]
