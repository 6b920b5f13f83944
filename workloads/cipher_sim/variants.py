"""Variants of the AES Rz programs: where the key is expanded, and the seed 003 calibration.

    from s2mc.workloads.cipher_sim.variants import source, CALIBRATIONS
    text = source("bytes", key_expansion="per-core", calibration="seed003")

The variants are written into the .rz files themselves, as comments, so the default programs are
exactly the programs without them (the same instructions, the same counts):

- a code line ending in `//@TAG: CODE` reads CODE instead in variant TAG (the line's indentation
  is kept), e.g. `if (me == 0) expand_key()   //@per-core: expand_key()`;
- a line holding only `//@TAG: CODE` becomes CODE in variant TAG.

Tags:

`per-core` (`--key-expansion per-core`): every core expands the key itself before the barrier,
into the same shared round-key array (every core writes the same values, and reads only words it
has written itself, so the result is the same whatever the timing); the default `core0` has core 0
expand it while the others wait at `sync()` (docs/aes-on-s2.md, "Where the key expansion runs").

`calibrate` (`calibration="seed003"`, the bytes style at -O0 only): `pad SITE` lines become inline
assembly with a number of extra data loads (`ld r0 nr`, a bus access whose value is discarded) and
of `nop`s, so that the program does the extra work per block and per run that the seed's 1-core
cells imply beyond ours (s2mc.experiments.fidelity fits it, docs/aes-on-s2.md explains it). The
per-block work is spread over the cipher: a `round` site after each of the four steps of the nine
middle rounds (36 per block for AES-128) and an `edge` site after the first AddRoundKey and after
each step of the last round (4 per block); the per-run work over the key expansion: a `key` site in
its loop over the schedule's words (40 for AES-128) and a `key-start` site at its start. Each
site gets an equal share; the remainder goes to the edge (or key-start) sites, so that the totals
per block and per run are exact for AES-128. Within a site the nops are spread evenly among the
loads (`arrangement="grouped"`: all the loads, then the nops; the fidelity experiment runs both,
because the 1-core cells cannot tell them apart).
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from s2mc.common.errors import S2mcError
from s2mc.workloads.aes import SOURCES
KEY_EXPANSIONS = ("core0", "per-core")

#: AES-128 multiplicities of the calibration sites (the cipher's nine middle rounds, its 40 key words).
ROUND_SITES_PER_BLOCK = 36     # 4 round-site lines x 9 rounds
EDGE_LINES = 4
KEY_SITES_PER_RUN = 40         # words 4 .. 43 of the schedule

_TAG = re.compile(r"//@([a-z0-9-]+):\s?(.*)$")


@dataclass(frozen=True)
class Calibration:
    """Extra work a calibrated program does: per block and per run (AES-128), non-memory
    instructions (`nop`) and data-memory accesses (loads)."""
    name: str
    block_ops: int
    block_mem: int
    run_ops: int
    run_mem: int
    style: str = "bytes"
    opt: int = 0
    key_expansion: str = "per-core"
    arrangement: str = "interleaved"   # a site's nops spread among its loads, or "grouped": loads, then nops
    note: str = ""

    def check(self, style: str, opt: int, key_expansion: str) -> None:
        """The calibration is fitted to one program: its style, level and key expansion."""
        if (style, opt, key_expansion) != (self.style, self.opt, self.key_expansion):
            raise S2mcError(f"calibration {self.name} is fitted for the {self.style} style at -O{self.opt} "
                            f"with the key expanded {self.key_expansion}, not the {style} style at -O{opt} "
                            f"with the key expanded {key_expansion}")

    def sites(self) -> dict[str, list[tuple[int, int]]]:
        """(ops, mem) of each line of each site kind, in file order."""
        def split(total: int, loop_runs: int, single_lines: int) -> tuple[int, list[int]]:
            """An equal share for each of loop_runs executions of loop sites and single_lines
            sites run once; the remainder spread over the single sites."""
            each = total // (loop_runs + single_lines)
            rest = total - loop_runs * each
            return each, [rest // single_lines + (i < rest % single_lines) for i in range(single_lines)]
        r_ops, e_ops = split(self.block_ops, ROUND_SITES_PER_BLOCK, EDGE_LINES)
        r_mem, e_mem = split(self.block_mem, ROUND_SITES_PER_BLOCK, EDGE_LINES)
        k_ops, s_ops = split(self.run_ops, KEY_SITES_PER_RUN, 1)
        k_mem, s_mem = split(self.run_mem, KEY_SITES_PER_RUN, 1)
        return {"round": [(r_ops, r_mem)] * 4, "edge": list(zip(e_ops, e_mem)),
                "key": [(k_ops, k_mem)], "key-start": [(s_ops[0], s_mem[0])]}


#: Fitted to seed 003's four 1-core cells only (Tables 3 and 4: their 1-core cycles and stalls are
#: lines in the number of blocks) against the uncalibrated bytes program at -O0 with the key expanded
#: per core: s2mc.experiments.fidelity.fit_calibration() derives these numbers, and a test checks it.
CALIBRATIONS = {
    "seed003": Calibration(
        "seed003", block_ops=157, block_mem=582, run_ops=1, run_mem=209,
        note="seed 003's 1-core slope (16,356 cycles and 4,547 accesses per block) and intercept "
             "(4,477 cycles) matched exactly, its intercept's 1,258 accesses as closely as those "
             "cycles allow (978)"),
}


def calibration(name: str | Calibration | None) -> Calibration | None:
    """A calibration by name (or itself)."""
    if name is None or isinstance(name, Calibration):
        return name
    try:
        return CALIBRATIONS[name]
    except KeyError:
        raise S2mcError(f"unknown calibration {name!r} (choose {', '.join(CALIBRATIONS)})") from None


def pad(ops: int, mem: int, arrangement: str = "interleaved") -> str:
    """Inline assembly of `mem` loads and `ops` nops: the nops spread evenly among the loads, or
    (`grouped`) all the loads and then all the nops."""
    n = ops + mem
    if n == 0:
        return ""
    if arrangement == "grouped":
        lines = ["ld r0 nr"] * mem + ["nop"] * ops
    else:
        lines = ["nop" if (i + 1) * ops // n > i * ops // n else "ld r0 nr" for i in range(n)]
    return 'asm("' + "\\n".join(lines) + '")'


def source(style: str, key_expansion: str = "core0", calibration: str | Calibration | None = None,
           opt: int = 0, path: Path | None = None) -> str:
    """The Rz source of a program variant (the file itself for the defaults); `path` is another
    cipher's program of that style (Camellia's: the same //@per-core line; the calibration is AES's)."""
    path = path or SOURCES.get(style)
    if path is None:
        raise S2mcError(f"unknown style {style!r} (choose {', '.join(SOURCES)})")
    if key_expansion not in KEY_EXPANSIONS:
        raise S2mcError(f"unknown key expansion {key_expansion!r} (choose {', '.join(KEY_EXPANSIONS)})")
    cal = globals()["calibration"](calibration)
    if cal is not None:
        cal.check(style, opt, key_expansion)
    tags = {"per-core"} if key_expansion == "per-core" else set()
    if cal is not None:
        tags.add("calibrate")
    return apply(path.read_text(encoding="utf-8"), tags, cal.sites() if cal else {},
                 str(path), cal.arrangement if cal else "interleaved")


def apply(text: str, tags: set[str], sites: dict[str, list[tuple[int, int]]], filename: str = "<rz>",
          arrangement: str = "interleaved") -> str:
    """Activate the `//@TAG:` lines of `tags` in Rz source `text`; `pad SITE` lines of the
    calibrate tag take the (ops, mem) of `sites`, one entry per line of that kind in file order."""
    out, seen = [], {k: 0 for k in sites}
    for n, line in enumerate(text.splitlines(keepends=True), 1):
        m = _TAG.search(line)
        if not m or m.group(1) not in tags:
            out.append(line)
            continue
        code = m.group(2).rstrip()
        if m.group(1) == "calibrate":
            kind = code.removeprefix("pad ").strip()
            if not code.startswith("pad ") or kind not in sites or seen[kind] >= len(sites[kind]):
                raise S2mcError(f"{filename}:{n}: a calibrate line is 'pad SITE' with SITE one of "
                                f"{', '.join(sites)} (as many lines of each as the calibration has)")
            code = pad(*sites[kind][seen[kind]], arrangement)
            seen[kind] += 1
        indent = line[:len(line) - len(line.lstrip())]
        out.append(indent + code + "\n" if code else "")
    missing = [k for k in sites if seen[k] != len(sites[k])]
    if missing:
        raise S2mcError(f"{filename}: the calibration needs {', '.join(missing)} site lines that are not there")
    return "".join(out)
