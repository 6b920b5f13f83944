"""Host side of Camellia on the simulated multicore: the AES runner's machinery with cipher="camellia"
(s2mc.workloads.cipher_sim.runner: the same host interface, partitions, memory layout at __heap, key
expansion on core 0 or on every core, records; every run checked against `cryptography`).

    from s2mc.workloads.camellia.runner import run_camellia
    r = run_camellia(data, key, counter, mode="ctr", cores=4, partition="contiguous")
"""
from __future__ import annotations

from s2mc.workloads.cipher_sim.runner import AesRun, run_cipher


def run_camellia(data: bytes, key: bytes, counter: bytes | None = None, **options) -> AesRun:
    """Camellia-128/192/256 (the key's length decides) on the simulated multicore; `options` as
    s2mc.workloads.cipher_sim.runner.run_cipher (AesConfig fields, check, vcd, timeline, trace)."""
    return run_cipher(data, key, counter, cipher="camellia", **options)
