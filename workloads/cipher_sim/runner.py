"""Host side of the cipher workloads (AES, and Camellia through the same machinery): compile once,
fill data symbols, run, read back, check.

    from s2mc.workloads.cipher_sim import run_aes
    r = run_aes(b"\\x00" * 64, key=bytes(16), mode="ecb", style="bytes", cores=4)
    r.output        # the ciphertext, already checked against `cryptography`
    r.result        # s2mc.simulator.Result: cycles, per-core counters, bus utilisation
    run_cipher(data, key, cipher="camellia", cores=4)     # the same for Camellia (style "sp")

The ciphers (`CIPHERS`) share the host interface: their programs read the same data symbols
(keybits, key, mode, decrypt, partition, ext, nwords or nbytes, src, dst, ctr0), so one runner
fills them; a cipher brings its styles (one program each), its oracle and its name.

Every run is checked against the `cryptography` package (OpenSSL); a mismatch raises
`AesMismatch` (an S2mcError) naming the first differing byte. The programs are
`aes_bytes.rz` (one byte per word), `aes_ttable.rz` (four bytes per word, big-endian) and
s2mc.workloads.camellia's `camellia.rz` (four bytes per word); each is compiled once per process
and cached. Inputs go to the `__heap` data symbol (after the per-core
stacks), so any size that fits in the simulated memory runs without recompiling.
"""
from __future__ import annotations

import functools
from dataclasses import dataclass, field

from s2mc.common.errors import S2mcError
from s2mc.simulator import CACHE_PARAMS, DEFAULT_MAX_CYCLES, NETWORK_PARAMS, Machine, Result
from s2mc.simulator.params import DEFAULTS, PARAMS, check as check_machine
from s2mc.simulator.records import result_rows, variant_parts
from s2mc.workloads import camellia

from . import variants

STYLES = ("bytes", "ttable")
MODES = ("ecb", "ctr")
DIRECTIONS = ("enc", "dec")
PARTITIONS = ("interleaved", "contiguous", "extended")
KEY_BITS = (128, 192, 256)
KEY_EXPANSIONS = variants.KEY_EXPANSIONS
DEFAULT_EXT_BLOCKS = 4
SOURCES = variants.SOURCES


@dataclass(frozen=True)
class SimCipher:
    """A cipher the simulated programs implement: its styles (one Rz program each, the first the
    default), their sources and its name in messages (`algorithm()` gives the `cryptography` object
    that checks it)."""
    name: str
    label: str
    styles: tuple[str, ...]
    sources: dict


CIPHERS = {"aes": SimCipher("aes", "AES", STYLES, SOURCES),
           "camellia": SimCipher("camellia", "Camellia", camellia.STYLES, {"sp": camellia.SOURCE})}
#: Every style of every cipher (styles are named apart, so a style names its program).
ALL_STYLES = tuple(s for c in CIPHERS.values() for s in c.styles)


class AesMismatch(S2mcError):
    """The simulated machine's output differs from the `cryptography` reference (any cipher)."""


def cipher_of(name: str) -> SimCipher:
    try:
        return CIPHERS[name]
    except KeyError:
        raise S2mcError(f"unknown cipher {name!r} (choose {', '.join(CIPHERS)})") from None


@dataclass(frozen=True)
class AesConfig:
    """One AES workload configuration (everything but the data and key)."""
    key_bits: int = 128
    mode: str = "ecb"
    direction: str = "enc"
    style: str = "bytes"
    partition: str = "interleaved"
    ext_blocks: int = DEFAULT_EXT_BLOCKS
    cores: int = DEFAULTS["cores"]
    mem_latency: int = DEFAULTS["mem_latency"]
    arbitration: str = DEFAULTS["arbitration"]
    engine: str = DEFAULTS["engine"]
    mem_words: int = DEFAULTS["mem_words"]
    opt: int = 1                  # Rz optimisation level the program is compiled at
    key_expansion: str = "core0"  # core0: core 0 expands the key; per-core: every core does
    calibration: object = None    # None, a calibration's name (variants.CALIBRATIONS) or a variants.Calibration
    cipher: str = "aes"           # a key of CIPHERS; style must be one of its styles
    cache: str = DEFAULTS["cache"]    # the private caches (docs/timing-model.md, "Caches and coherence")
    cache_lines: int = DEFAULTS["cache_lines"]
    cache_ways: int = DEFAULTS["cache_ways"]
    line_words: int = DEFAULTS["line_words"]
    cache_hit_latency: int = DEFAULTS["cache_hit_latency"]
    interconnect: str = DEFAULTS["interconnect"]   # bus, or a ring or mesh with directory coherence
    coherence: str = DEFAULTS["coherence"]
    link_latency: int = DEFAULTS["link_latency"]
    router_latency: int = DEFAULTS["router_latency"]
    flit_words: int = DEFAULTS["flit_words"]

    @property
    def caches(self) -> dict:
        """The cache parameters, as Machine takes them."""
        return {k: getattr(self, k) for k in CACHE_PARAMS}

    @property
    def network(self) -> dict:
        """The network parameters, as Machine takes them."""
        return {k: getattr(self, k) for k in NETWORK_PARAMS}

    def check(self) -> None:
        def choose(what, value, allowed):
            if value not in allowed:
                raise S2mcError(f"unknown {what} {value!r} (choose {', '.join(map(str, allowed))})")
        choose("key size", self.key_bits, KEY_BITS)
        choose("mode", self.mode, MODES)
        choose("direction", self.direction, DIRECTIONS)
        choose("style", self.style, cipher_of(self.cipher).styles)
        choose("partition", self.partition, PARTITIONS)
        check_machine(cores=self.cores, mem_latency=self.mem_latency, arbitration=self.arbitration,
                      mem_words=self.mem_words, engine=self.engine, **self.caches, **self.network)
        if not isinstance(self.ext_blocks, int) or self.ext_blocks < 1:
            raise S2mcError(f"extended run length {self.ext_blocks} must be at least 1 block")
        if self.opt not in (0, 1):
            raise S2mcError(f"unknown optimisation level -O{self.opt} (use 0 or 1)")
        choose("key expansion", self.key_expansion, KEY_EXPANSIONS)
        cal = variants.calibration(self.calibration)
        if cal is not None:
            cal.check(self.style, self.opt, self.key_expansion)

    @property
    def workload(self) -> str:
        """Records `workload`: <cipher>-<bits>-<mode>-<enc|dec> (aes-128-ecb-enc, camellia-256-ctr-enc)."""
        return f"{self.cipher}-{self.key_bits}-{self.mode}-{self.direction}"

    @property
    def variant(self) -> str:
        """Records `variant`: style/partition[-E], plus /L<n>, /<arbitration>, /O0, /per-core and
        /cal-<name> when not the defaults (L = 2, fifo, -O1, key expanded on core 0, no calibration)."""
        part = f"extended-{self.ext_blocks}" if self.partition == "extended" else self.partition
        parts = [self.style, part, *variant_parts(self.mem_latency, self.arbitration, **self.caches,
                                                                **self.network)]
        if self.opt != 1:
            parts.append(f"O{self.opt}")
        if self.key_expansion != "core0":
            parts.append(self.key_expansion)
        if self.calibration is not None:
            parts.append(f"cal-{variants.calibration(self.calibration).name}")
        return "/".join(parts)


@dataclass
class AesRun:
    config: AesConfig
    nbytes: int
    output: bytes
    result: Result
    sim_seconds: float            # wall-clock seconds of Machine.run()
    words: dict = field(default_factory=dict)   # where the data went: src, dst, words needed
    checked: bool = False         # compared with `cryptography` (and equal)


@functools.lru_cache(maxsize=None)
def program(style: str, opt: int = 1, key_expansion: str = "core0", calibration=None):
    """The compiled program of a style (compiled once per process, optimisation level and variant:
    where the key is expanded and the calibration, s2mc.workloads.cipher_sim.variants)."""
    if style not in ALL_STYLES:
        raise S2mcError(f"unknown style {style!r} (choose {', '.join(ALL_STYLES)})")
    from s2mc.compiler import compile as rz_compile
    path = next(c.sources[style] for c in CIPHERS.values() if style in c.sources)
    text = variants.source(style, key_expansion, calibration, opt, path)
    return rz_compile(text, opt=opt, filename=str(path)).program


# --------------------------------------------------------------------------------------------------
# the oracle
# --------------------------------------------------------------------------------------------------

def algorithm(cipher: str, key: bytes):
    """The `cryptography` algorithm object of a cipher (Camellia sits in its `decrepit` package
    since cryptography 43; older versions have it beside AES)."""
    if cipher == "aes":
        from cryptography.hazmat.primitives.ciphers import algorithms
        return algorithms.AES(key)
    try:
        from cryptography.hazmat.decrepit.ciphers import algorithms as old
    except ImportError:                # pragma: no cover - cryptography < 43
        from cryptography.hazmat.primitives.ciphers import algorithms as old
    return old.Camellia(key)


def reference(data: bytes, key: bytes, mode: str, direction: str, counter: bytes | None,
              cipher: str = "aes") -> bytes:
    """The cipher by the `cryptography` package (OpenSSL): the oracle every run is checked against.
    `cryptography` has no Camellia-CTR, so its CTR is the keystream of the counter blocks
    (SP 800-38A's 128-bit big-endian increment) encrypted by its Camellia-ECB."""
    from cryptography.hazmat.primitives.ciphers import Cipher, modes
    if mode == "ctr" and cipher != "aes":
        start = int.from_bytes(counter, "big")
        blocks = b"".join(((start + i) % (1 << 128)).to_bytes(16, "big") for i in range(-(-len(data) // 16)))
        ks = Cipher(algorithm(cipher, key), modes.ECB()).encryptor().update(blocks)
        return bytes(a ^ b for a, b in zip(data, ks))
    m = modes.ECB() if mode == "ecb" else modes.CTR(counter)
    c = Cipher(algorithm(cipher, key), m)
    op = c.decryptor() if (mode == "ecb" and direction == "dec") else c.encryptor()
    return op.update(data) + op.finalize()


# --------------------------------------------------------------------------------------------------
# packing
# --------------------------------------------------------------------------------------------------

def _to_words(data: bytes, style: str) -> list[int]:
    if style == "bytes":
        return list(data)
    pad = data + bytes(-len(data) % 4)
    return [int.from_bytes(pad[i:i + 4], "big", signed=True) for i in range(0, len(pad), 4)]


def _from_words(words: list[int], style: str, nbytes: int) -> bytes:
    if style == "bytes":
        bad = next((w for w in words if not 0 <= w <= 255), None)
        if bad is not None:
            raise AesMismatch(f"the simulated program wrote {bad}, which is not a byte")
        return bytes(words)
    return b"".join((w & 0xFFFFFFFF).to_bytes(4, "big") for w in words)[:nbytes]


def data_words(nbytes: int, style: str) -> int:
    """Words one buffer of `nbytes` takes in the simulated memory."""
    return nbytes if style == "bytes" else -(-nbytes // 4)


def words_needed(nbytes: int, style: str, opt: int = 1) -> int:
    """Simulated memory (words) a run needs: program data, stacks, input and output buffers."""
    return program(style, opt).address_of("__heap") + 2 * data_words(nbytes, style)


def max_bytes(style: str, opt: int = 1, mem_words: int = PARAMS["mem_words"].max) -> int:
    """The largest data size whose run fits in `mem_words` words of simulated memory (by default
    the largest memory there is): the inverse of words_needed."""
    per_buffer = max(0, mem_words - program(style, opt).address_of("__heap")) // 2
    return per_buffer if style == "bytes" else 4 * per_buffer


def check_lengths(nbytes: int, mode: str) -> None:
    if nbytes < 0:
        raise S2mcError(f"data length {nbytes} is negative")
    if mode == "ecb" and nbytes % 16:
        raise S2mcError(f"ECB needs whole 16-byte blocks: {nbytes} bytes is {nbytes // 16} blocks "
                        f"and {nbytes % 16} bytes (pad the data or use --mode ctr)")


def _max_cycles(nbytes: int, cfg: AesConfig) -> int:
    """A cycle limit that only an endless loop reaches (about 20x the worst expected run)."""
    blocks = -(-nbytes // 16) + 1
    return max(DEFAULT_MAX_CYCLES, 150_000 * cfg.mem_latency * blocks)


# --------------------------------------------------------------------------------------------------
# running
# --------------------------------------------------------------------------------------------------

def run_cipher(data: bytes, key: bytes, counter: bytes | None = None, *, check: bool = True,
               config: AesConfig | None = None, vcd: str | None = None, timeline: str | None = None,
               timeline_window: tuple[int, int | None] = (0, None), trace: bool = False, **options) -> AesRun:
    """Run a cipher (AES by default; `cipher="camellia"`) on the simulated multicore and check the
    result against `cryptography`.

    `options` are AesConfig fields (key_bits is taken from the key; the style defaults to the
    cipher's first). `counter` (CTR only) is the
    16-byte initial counter block (default: zero). Raises S2mcError on a bad configuration, a
    non-whole-block ECB length, data too large for the configured memory, a simulated fault, or
    a result that differs from the reference (AesMismatch). `vcd` (systemc engine only) names
    a VCD waveform file to write; `timeline` a timeline file (.html, .json, .png or .svg) of the
    cycles in `timeline_window` (s2mc.simulator.timeline); `trace` keeps the event log in
    result.trace (small runs: s2mc.simulator.replay_bus replays it).
    """
    data, key = bytes(data), bytes(key)
    ciph = cipher_of(config.cipher if config else options.get("cipher", "aes"))
    if len(key) not in (16, 24, 32):
        raise S2mcError(f"{'an' if ciph.label[0] in 'AEIOU' else 'a'} {ciph.label} key is 16, 24 or 32 "
                        f"bytes, not {len(key)}")
    if config is None and "style" not in options:
        options["style"] = ciph.styles[0]
    cfg = config or AesConfig(**{**options, "key_bits": len(key) * 8})
    if cfg.key_bits != len(key) * 8:
        raise S2mcError(f"the configuration says {ciph.label}-{cfg.key_bits} but the key has "
                        f"{len(key) * 8} bits")
    cfg.check()
    check_lengths(len(data), cfg.mode)
    if cfg.mode == "ctr":
        counter = bytes(16) if counter is None else bytes(counter)
        if len(counter) != 16:
            raise S2mcError(f"the CTR counter block is 16 bytes, not {len(counter)}")
    style, n = cfg.style, len(data)
    prog = program(style, cfg.opt, cfg.key_expansion, cfg.calibration)
    heap = prog.address_of("__heap")
    nwords = data_words(n, style)
    need = heap + 2 * nwords
    if need > cfg.mem_words:
        raise S2mcError(
            f"{n} bytes of data do not fit in the simulated memory: the {style} program needs "
            f"{need} words ({heap} for its data and stacks, 2 x {nwords} for input and output) "
            f"but only {cfg.mem_words} are configured; raise --mem-words to at least {need}")
    src, dst = heap, heap + nwords

    m = Machine(prog, cores=cfg.cores, mem_latency=cfg.mem_latency, arbitration=cfg.arbitration,
                max_cycles=_max_cycles(n, cfg), mem_words=cfg.mem_words, engine=cfg.engine,
                timeline=timeline, timeline_window=timeline_window, trace=trace, **cfg.caches, **cfg.network,
                **({"vcd": vcd} if vcd else {}))
    m.write("keybits", [cfg.key_bits])
    m.write("key", _to_words(key, style))
    m.write("mode", [MODES.index(cfg.mode)])
    m.write("decrypt", [int(cfg.mode == "ecb" and cfg.direction == "dec")])
    m.write("partition", [PARTITIONS.index(cfg.partition)])
    m.write("ext", [cfg.ext_blocks])
    m.write("nbytes" if style == "bytes" else "nwords", [n if style == "bytes" else nwords])
    if cfg.mode == "ctr":
        m.write("ctr0", _to_words(counter, style))
    if nwords:
        m.write(src, _to_words(data, style))
    # src must be non-zero even for empty data (src == 0 selects the built-in FIPS-197 demo)
    m.write("src", [src])
    m.write("dst", [dst])
    result = m.run()
    seconds = result.sim_seconds
    out = _from_words(m.read(dst, nwords), style, n) if nwords else b""
    if check:
        want = reference(data, key, cfg.mode, cfg.direction, counter, cfg.cipher)
        if out != want:
            i = next(i for i in range(len(want)) if out[i] != want[i])
            raise AesMismatch(
                f"{ciph.label} mismatch: {cfg.workload} {cfg.variant} on {cfg.cores} cores, {n} bytes: byte "
                f"{i} (block {i // 16}) is {out[i]:#04x}, cryptography says {want[i]:#04x}")
    return AesRun(cfg, n, out, result, seconds, {"src": src, "dst": dst, "needed": need}, check)


#: AES is the cipher run_cipher runs by default.
run_aes = run_cipher


# --------------------------------------------------------------------------------------------------
# records (docs/records.md)
# --------------------------------------------------------------------------------------------------

def record_rows(run: AesRun, run_id: str, experiment: str = "aes") -> list[dict]:
    """Tidy rows for one run: whole-run totals (core -1) and every core's counters."""
    return result_rows(run.result, run_id, experiment=experiment, workload=run.config.workload,
                       variant=run.config.variant, nbytes=run.nbytes, cipher=run.config.cipher)


def summary(run: AesRun) -> dict:
    """One run as a plain dict (what `s2mc aes --json` prints per run)."""
    cfg, res = run.config, run.result
    return {"cipher": cfg.cipher, "workload": cfg.workload, "variant": cfg.variant, "key_bits": cfg.key_bits,
            "mode": cfg.mode, "direction": cfg.direction, "style": cfg.style,
            "partition": cfg.partition, "ext_blocks": cfg.ext_blocks, "engine": cfg.engine,
            "mem_latency": cfg.mem_latency, "arbitration": cfg.arbitration, "opt": cfg.opt,
            "key_expansion": cfg.key_expansion, **(cfg.caches if cfg.cache != "none" else {}),
            **(cfg.network if cfg.interconnect != "bus" else {}),
            "calibration": None if cfg.calibration is None else variants.calibration(cfg.calibration).name,
            "cores": cfg.cores,
            "bytes": run.nbytes, "cycles": res.cycles, "instructions": res.instructions,
            "stall_cycles": res.stall_cycles, "bus_busy_cycles": res.bus_busy_cycles,
            "bus_utilisation": res.bus_utilisation, "sim_seconds": run.sim_seconds,
            "checked": run.checked, "per_core": res.cores}
