"""The example programs shipped inside the s2mc package (workloads/asm/*.s and workloads/rz/*.rz),
so that the README tour and the tutorial work from any folder, not only from the checkout.

    from s2mc.workloads import examples
    examples.all_examples()              # [Example(name='barrier.s', ...), ...]
    examples.resolve("fib.rz")           # the packaged copy when ./fib.rz does not exist
    examples.copy(["fib.rz"], "lab/")    # lab/fib.rz, to edit

A name resolves to the packaged copy only when no such file exists and it is written as the bare
file name (`fib.rz`), `examples/NAME` or the checkout's own path (`workloads/rz/fib.rz`): a file
of the user's always wins, and any other missing path stays an error.
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from s2mc.common.errors import S2mcError
from s2mc.common.outputs import one_unit, write_output

#: The folders of this package that hold examples, and what their files are written in.
FOLDERS = {"asm": ("S2 assembly", ".s"), "rz": ("Rz", ".rz")}
HERE = Path(__file__).resolve().parent


@dataclass(frozen=True)
class Example:
    name: str          # the file name, unique over all folders: barrier.s, fib.rz
    folder: str        # asm | rz
    path: Path         # the packaged file
    language: str
    description: str   # the file's first comment line

    @property
    def checkout_path(self) -> str:
        """Where it lives in a checkout of s2mc (and what the docs call it): workloads/rz/fib.rz."""
        return f"workloads/{self.folder}/{self.name}"


def _description(path: Path) -> str:
    """The file's first comment line when it is a whole sentence, else its title (up to ': ' or '; ')."""
    for line in path.read_text(encoding="utf-8").splitlines():
        text = line.strip()
        if text.startswith((";", "//")):
            text = text.lstrip(";/").strip()
            if text.endswith(".") and not text.endswith(".."):
                return text[:-1]
            cuts = [i for i in (text.find(": "), text.find("; ")) if i > 0]
            return text[:min(cuts)] if cuts else text
        if text:
            break
    return ""


#: The header line by which a program says that each core does the same work, so that n cores do n
#: times as much and a sweep's cycles(1) / cycles(n) is no speedup (`s2mc run --cores 1,2,4,8`).
WORK_PER_CORE = "work: per core"


def declares_work_per_core(source: str) -> bool:
    """Whether a program's text (.s or .rz) has a comment line that starts `; work: per core`
    (`// work: per core` in Rz). The examples put it last, so that no line number moves."""
    for line in source.splitlines():
        text = line.strip()
        if text.startswith((";", "//")) and text.lstrip(";/").strip().startswith(WORK_PER_CORE):
            return True
    return False


def work_per_core(path: str | os.PathLike) -> bool:
    """declares_work_per_core for a program file (a bundled example by name too); an .obj has no
    comments: False."""
    path = resolve(path)
    if not str(path).endswith((".s", ".rz")) or not Path(path).is_file():
        return False
    return declares_work_per_core(Path(path).read_text(encoding="utf-8", errors="replace"))


def all_examples() -> list[Example]:
    """Every bundled example, assembly first, each folder sorted by name."""
    out = []
    for folder, (language, suffix) in FOLDERS.items():
        for p in sorted((HERE / folder).glob(f"*{suffix}")):
            out.append(Example(p.name, folder, p, language, _description(p)))
    return out


def find(name: str) -> Example:
    """An example by file name (`fib.rz`) or, when that is unambiguous, by stem (`fib`)."""
    every = all_examples()
    hits = [e for e in every if e.name == name] or [e for e in every if Path(e.name).stem == name]
    if len(hits) == 1:
        return hits[0]
    if hits:
        raise S2mcError(f"examples: {name!r} is ambiguous ({', '.join(e.name for e in hits)}): "
                        "give the file name")
    raise S2mcError(f"examples: no example {name!r} (see `s2mc examples`)")


def bundled(path: str | os.PathLike) -> Example | None:
    """The example a missing path names (`fib.rz`, `examples/fib.rz`, `workloads/rz/fib.rz`), or None."""
    p = Path(path)
    if p.exists():
        return None
    parts = p.parts
    hit = next((e for e in all_examples() if e.name == p.name), None)
    if hit is None:
        return None
    if len(parts) == 1 or parts == ("examples", hit.name) or parts == ("workloads", hit.folder, hit.name):
        return hit
    return None


def load(path: str, opt: int = 1, debug: bool = False):
    """A Program from .rz (compiled at -O`opt`, with debug information when `debug`), .s (assembled)
    or .obj; a bundled example by name too."""
    from s2mc.isa import load_program, read_text
    path = resolve(path)
    if path.endswith(".rz"):
        source = read_text(path)
        from s2mc.compiler import compile as compile_rz
        return compile_rz(source, opt=opt, filename=path, debug=debug).program
    if not path.endswith((".s", ".obj")):
        raise S2mcError(f"{path}: expected a .rz, .s or .obj file")
    if not Path(path).exists():
        raise S2mcError(f"{path}: no such file (the bundled examples: `s2mc examples`)")
    return load_program(path)


def resolve(path: str | os.PathLike) -> str:
    """The file to read for a program argument: the path itself, or the packaged copy of the example
    it names when there is no such file here (see `bundled`)."""
    hit = bundled(path)
    return str(hit.path) if hit else str(path)


def copy(names: list[str], dest: str | os.PathLike = ".", force: bool = False) -> list[Path]:
    """Copy examples (all of them when `names` is empty) into the folder `dest` (created if missing,
    not its parents). An existing file is kept (someone may have edited it) unless `force`."""
    chosen = [find(n) for n in names] if names else all_examples()
    folder = Path(dest)
    if folder.exists() and not folder.is_dir():
        raise S2mcError(f"examples copy: {dest}: not a folder")
    targets = [(e, folder / e.name) for e in dict.fromkeys(chosen)]
    if not force:
        kept = [str(t) for _, t in targets if t.exists()]
        if kept:
            raise S2mcError(f"examples copy: {', '.join(kept)} already exists (--force replaces it)")
    folder.mkdir(exist_ok=True)
    with one_unit():   # all of them or none
        for e, target in targets:
            write_output(target, e.path.read_text(encoding="utf-8"), what="example")
    return [t for _, t in targets]
