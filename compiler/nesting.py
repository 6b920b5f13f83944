"""Deeply nested programs (docs/rz.md, "Limits"): one bound on nesting and one place that gives the
recursive passes the stack they need.

The parser, the checker, the constant folder, the code generator and the interpreter recurse a few
Python frames per level of the AST (a block inside an `if`, an operand of `+`, ...). Real programs
nest thousands of levels deep (a long sum, an else-if chain), far past Python's default recursion
limit of 1000 frames. Two things make every depth safe:

* MAX_NESTING bounds how deep a program may nest. The parser stops at that many open brackets,
  blocks and operands, and check_depth() (iterative) refuses a parsed AST deeper than that, both
  with one line: `file:line:col: nesting too deep (limit 100000)`.
* deep() runs a pass with a recursion limit of FRAMES_PER_LEVEL frames per level of nesting, in a
  thread with a STACK_BYTES stack. Since Python 3.11 a call from Python code to a Python function
  takes no C stack, only heap (a few hundred bytes a frame); the thread's stack is the margin for
  C-level calls. Measured: compiling and interpreting programs nested 50,000 levels deep works in
  a thread with a 64 KiB stack (no C stack per level), so STACK_BYTES is a thousandfold margin.

FRAMES_PER_LEVEL is the most frames any pass takes per level, plus one spare: the parser takes 4
(a call argument: primary -> arguments -> expression -> unary), the code generator 3 (expr ->
call -> register_args), the others 2. The interpreter charges each active call the frames its
function's depth may take and stops with a runtime error before the limit. The constants are
checked against every construct at a lowered limit by tests/test_compiler_limits.py.
"""
from __future__ import annotations

import functools
import sys
import threading

from . import astnodes as A
from .errors import CompileError

MAX_NESTING = 100_000       # AST levels (check_depth); brackets, blocks and operands (parser)
FRAMES_PER_LEVEL = 5        # Python frames per level: 4 in the parser, plus one spare
MARGIN_FRAMES = 2_000       # frames below the passes (compile(), the thread's start)
STACK_BYTES = 64 << 20      # the C stack of deep()'s thread (reserved; pages used as touched)


def recursion_limit() -> int:
    return FRAMES_PER_LEVEL * MAX_NESTING + MARGIN_FRAMES


def too_deep(filename: str, line: int, col: int) -> CompileError:
    return CompileError(filename, line, col, f"nesting too deep (limit {MAX_NESTING})")


def check_depth(prog: A.Program, filename: str) -> A.Program:
    """Refuse an AST deeper than MAX_NESTING levels below its function (or global), at the first
    node in source order that is too deep. Iterative, so it is safe before any recursive pass."""
    stack = [(n, 0) for n in reversed(A.children(prog))]
    while stack:
        node, depth = stack.pop()
        if depth > MAX_NESTING:
            raise too_deep(filename, node.line, node.col)
        stack.extend((c, depth + 1) for c in reversed(A.children(node)))
    return prog


def height(node) -> int:
    """The number of AST levels below node (0 for a leaf), iteratively."""
    best, stack = 0, [(node, 0)]
    while stack:
        n, d = stack.pop()
        best = max(best, d)
        stack.extend((c, d + 1) for c in A.children(n))
    return best


# deep() raises the process-wide recursion limit while at least one deep pass runs and puts the old
# one back when the last one ends (so that concurrent compiles never lower it under each other).
_lock = threading.Lock()
_running = 0
_old_limit = 0
_inside = threading.local()


def _enter() -> None:
    global _running, _old_limit
    with _lock:
        if _running == 0:
            _old_limit = sys.getrecursionlimit()
        _running += 1
        sys.setrecursionlimit(max(_old_limit, recursion_limit()))


def _leave() -> None:
    global _running
    with _lock:
        _running -= 1
        if _running == 0:
            sys.setrecursionlimit(_old_limit)


def deep(fn):
    """Run fn in a thread with a big stack and a recursion limit for MAX_NESTING levels (once: a
    deep pass that calls another runs it directly). Its result or exception comes back as is."""
    @functools.wraps(fn)
    def run(*args, **kwargs):
        if getattr(_inside, "active", False):
            return fn(*args, **kwargs)
        outcome: dict = {}

        def body():
            _inside.active = True
            try:
                outcome["value"] = fn(*args, **kwargs)
            except BaseException as exc:  # noqa: BLE001 - handed to the caller's thread below
                outcome["error"] = exc

        _enter()
        try:
            with _lock:                    # stack_size is process-wide: set it just for this thread
                old = threading.stack_size(STACK_BYTES)
                try:
                    worker = threading.Thread(target=body, name=f"s2mc-rz-{fn.__name__}", daemon=True)
                    worker.start()
                finally:
                    threading.stack_size(old)
            worker.join()
        finally:
            _leave()
        if "error" in outcome:
            raise outcome["error"]
        return outcome["value"]

    return run
