"""Camellia (RFC 3713) on the simulated S2 multicore (docs/camellia-on-s2.md).

    from s2mc.workloads.camellia.runner import run_camellia
    r = run_camellia(data, key, mode="ctr", counter=iv, cores=4)     # checked against `cryptography`

reference.py is Camellia in Python from the RFC (the program's tables and a second oracle),
tables.py writes camellia.rz's table block, camellia.rz is the program, runner.py the host side
(the AES runner's machinery with cipher="camellia": s2mc.workloads.cipher_sim.runner).
"""
from pathlib import Path

#: The Rz program (its one style is "sp": SP-tables on 32-bit words).
SOURCE = Path(__file__).resolve().parent / "camellia.rz"
STYLES = ("sp",)
