"""The `systemc` engine: the same machine as SystemC modules, run in a child process.

SystemC allows one elaboration per process, so the model is its own executable, `s2mc-systemc`
(simulator/systemc/, installed beside the `s2mc` command). This module is its host side: it keeps the
memory writes made before the run, hands the machine to the child in an input file, and reads back
the result (the same raw dict as the fast engine's binding), the final registers and the final
memory. `Machine(program, engine="systemc", vcd="run.vcd")` uses it; see docs/systemc.md.
"""
from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import sysconfig
import tempfile
from array import array
from pathlib import Path

from s2mc.common.errors import S2mcError
from s2mc.common.outputs import Output, check as check_output, cleanup_on_signal, remove_stale

EXECUTABLE = "s2mc-systemc"
ENV_OVERRIDE = "S2MC_SYSTEMC"   # path to the executable, for builds outside the package
#: The child's private folders: TMPDIR/s2mc-systemc-<host pid>-XXXX. A host killed by SIGKILL
#: leaves its folder; the next run removes those whose host is gone.
TEMP_PREFIX = "s2mc-systemc-"
#: The child exits when its parent is no longer this process (simulator/systemc/main.cpp).
ENV_PARENT = "S2MC_PARENT_PID"


def executable() -> Path | None:
    """The path of the s2mc-systemc executable, or None when the engine is not built.

    The build installs it as a script of the environment (beside the `s2mc` command), where pip
    keeps its executable bit; S2MC_SYSTEMC names another build.
    """
    override = os.environ.get(ENV_OVERRIDE)
    path = Path(override) if override else Path(sysconfig.get_path("scripts")) / EXECUTABLE
    return path if path.is_file() and os.access(path, os.X_OK) else None


def available() -> bool:
    """True when the SystemC engine is built (for `s2mc info` and test skips)."""
    return executable() is not None


def _not_built() -> S2mcError:
    return S2mcError("the systemc engine is not built (no s2mc-systemc executable beside the s2mc command); "
                     "install libsystemc-dev and rerun `make setup`")


class SystemCEngine:
    """Host side of one SystemC run, with the fast binding's interface (write, read, registers, run)."""

    def __init__(self, code, data, entry, config, trace=None, vcd: str | os.PathLike | None = None,
                 stacks=None):
        """`trace`: None, or a sink (s2mc.simulator.trace) that receives the event log as the child
        makes it, through a pipe. `stacks`: the program's declared stacks (s2mc.isa.Stacks) or None."""
        self._exe = executable()
        if self._exe is None:
            raise _not_built()
        self._code = [int(w) & 0xFFFFFFFF for w in code]
        self._data = [int(w) for w in data]
        self._entry = int(entry)
        self._stacks = stacks
        self._config = config
        self._trace = trace
        self._vcd = os.fspath(vcd) if vcd else None
        if self._vcd:
            check_output(self._vcd, "VCD waveform")   # a missing folder fails before any work
        self._writes: list[tuple[int, list[int]]] = []
        self._memory: array | None = None   # the final memory, after the run
        self._registers: list[list[int]] | None = None

    # -- memory before and after the run -----------------------------------------------------------
    def write(self, addr: int, words) -> None:
        words = [int(w) for w in words]
        if addr < 0 or addr + len(words) > self._config.mem_words:
            raise S2mcError("write past the end of memory")
        if self._memory is not None:   # after the run: like the fast engine, the memory is just memory
            self._memory_extend(addr + len(words))
            self._memory[addr:addr + len(words)] = array("i", words)
            return
        self._writes.append((addr, words))

    def read(self, addr: int, n: int) -> list[int]:
        if addr < 0 or addr + n > self._config.mem_words:
            raise S2mcError("read past the end of memory")
        if self._memory is not None:
            have = self._memory[addr:addr + n].tolist()
            return have + [0] * (n - len(have))
        out = [0] * n
        for start, words in [(0, self._data)] + self._writes:   # the initial image, then the writes
            lo, hi = max(start, addr), min(start + len(words), addr + n)
            if lo < hi:
                out[lo - addr:hi - addr] = words[lo - start:hi - start]
        return out

    def _memory_extend(self, n: int) -> None:
        if len(self._memory) < n:
            self._memory.extend([0] * (n - len(self._memory)))

    def registers(self, core: int) -> list[int]:
        if not 0 <= core < self._config.cores:
            raise S2mcError(f"core {core} does not exist (cores 0..{self._config.cores - 1})")
        if self._registers is None:
            return [0] * 32
        return list(self._registers[core])

    # -- the run -----------------------------------------------------------------------------------
    def _input_text(self) -> str:
        c = self._config
        parts = ["s2mc-systemc-input 1",
                 f"cores {c.cores} mem_latency {c.mem_latency} arbitration {c.arbitration}",
                 f"max_cycles {c.max_cycles} mem_words {c.mem_words} entry {self._entry} trace {int(bool(self._trace))}"]
        if c.cache != "none":
            parts.append(f"cache {c.cache} {c.cache_lines} {c.cache_ways} {c.line_words} {c.cache_hit_latency}")
        if c.networked:
            parts.append(f"network {c.interconnect} {c.link_latency} {c.router_latency} {c.flit_words}")
        if c.buffered:
            parts.append(f"consistency {c.consistency} {c.store_buffer_entries}")
        if self._stacks is not None:
            parts.append("stacks {} {} {}".format(*self._stacks))
        parts += [f"code {len(self._code)}", " ".join(map(str, self._code)),
                  f"data {len(self._data)}", " ".join(map(str, self._data))]
        for addr, words in self._writes:
            parts += [f"write {addr} {len(words)}", " ".join(map(str, words))]
        parts.append("end\n")
        return "\n".join(parts)

    def run(self) -> dict:
        # The waveform follows s2mc.common.outputs: for a regular file the child writes the 0600
        # temporary file beside the target (its name ends in .vcd, as SystemC wants), which is
        # renamed over the target only when the run succeeded; a device, FIFO or stdout gets a copy
        # of a private file afterwards. A failed run leaves neither behind.
        vcd = Output(self._vcd, "wb", what="VCD waveform", suffix=".part.vcd") if self._vcd else None
        remove_stale(tempfile.gettempdir(), TEMP_PREFIX)
        try:
            with tempfile.TemporaryDirectory(prefix=f"{TEMP_PREFIX}{os.getpid()}-") as tmp, \
                    cleanup_on_signal(lambda: shutil.rmtree(tmp, ignore_errors=True)):
                f = vcd.open() if vcd else None
                raw, mem = self._run_in(Path(tmp), vcd.temp_path if vcd else None)
                if vcd:
                    if vcd.temp_path is None:
                        with open(Path(tmp) / "wave.vcd", "rb") as src:
                            shutil.copyfileobj(src, f, 1 << 20)
                    vcd.commit()
        except BaseException:
            if vcd:
                vcd.discard()
            raise
        if sys.byteorder != "little":
            mem.byteswap()
        self._memory = mem
        self._registers = raw.pop("registers")
        raw.pop("pcs", None)
        raw["output"] = [(cyc, core, text) for cyc, core, text in raw["output"]]
        return raw

    def _run_in(self, tmp: Path, vcd_path: str | None) -> tuple[dict, array]:
        """Runs the child with its files in `tmp`; returns its raw result and final memory."""
        (tmp / "machine.txt").write_text(self._input_text())
        cmd = [str(self._exe), "--input", str(tmp / "machine.txt"), "--result", str(tmp / "result.json"),
               "--memory", str(tmp / "memory.bin")]
        if self._vcd:
            cmd += ["--vcd", vcd_path or str(tmp / "wave.vcd")]
        env = dict(os.environ, SYSTEMC_DISABLE_COPYRIGHT_MESSAGE="1", **{ENV_PARENT: str(os.getpid())})
        with open(tmp / "stdout", "w+b") as out, open(tmp / "stderr", "w+b") as err:
            returncode = self._run_child(cmd, env, out, err)
            if returncode != 0:
                out.seek(0)
                err.seek(0)
                text = lambda f: f.read().decode("utf-8", "replace")  # noqa: E731
                raise S2mcError(_child_failure(subprocess.CompletedProcess(cmd, returncode, text(out), text(err))))
        try:
            raw = json.loads((tmp / "result.json").read_text())
            mem = array("i")
            mem.frombytes((tmp / "memory.bin").read_bytes())
        except (OSError, ValueError) as exc:
            raise S2mcError(f"the systemc engine finished but its result could not be read: {exc}") from None
        return raw, mem

    def _run_child(self, cmd, env, out, err) -> int:
        """Runs the child to its end; with a trace, hands the sink the log as it comes down a pipe,
        so that no more than a pipe's worth is held here. Its stdout and stderr go to files, so
        that it can never block on them while this side reads the pipe."""
        fds = ()
        if self._trace:
            read_fd, write_fd = os.pipe()
            fds = (write_fd,)
            cmd = cmd + ["--trace", f"/dev/fd/{write_fd}"]
        try:
            proc = subprocess.Popen(cmd, env=env, stdout=out, stderr=err, pass_fds=fds)
        except OSError as exc:
            if fds:
                os.close(read_fd)
            raise S2mcError(f"cannot start the systemc engine {self._exe}: {exc.strerror or exc}") from None
        finally:
            for fd in fds:
                os.close(fd)   # the child has its own copy: the pipe ends when the child does
        try:
            with cleanup_on_signal(proc.kill):   # a signal ending us: stop it now, not 50 ms later
                if fds:
                    with os.fdopen(read_fd, "rb") as pipe:
                        while chunk := pipe.read(1 << 16):
                            self._trace(chunk)
                return proc.wait()
        finally:
            if proc.poll() is None:   # the sink failed: stop the child
                proc.kill()
                proc.wait()


def _child_failure(proc: subprocess.CompletedProcess) -> str:
    """One clear line for a failed child: its own error line, or how it died."""
    lines = [ln.strip() for ln in (proc.stderr or "").splitlines() if ln.strip()]
    mine = [ln for ln in lines if ln.startswith("s2mc-systemc: error:")]
    if proc.returncode > 0 and mine:
        return "systemc engine: " + mine[0][len("s2mc-systemc: error:"):].strip()
    if proc.returncode < 0:
        try:
            name = signal.Signals(-proc.returncode).name
        except ValueError:
            name = f"signal {-proc.returncode}"
        how = f"crashed ({name})"
    else:
        how = f"failed (exit status {proc.returncode})"
    last = f": {lines[-1]}" if lines else ""
    return f"the systemc engine (s2mc-systemc) {how}{last}"
