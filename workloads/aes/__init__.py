"""AES (FIPS-197) in Rz for the simulated S2 multicore (docs/aes-on-s2.md): the programs
aes_bytes.rz (one byte per word) and aes_ttable.rz (four bytes per word, big-endian), and tables.py,
which writes their table blocks. The host side that runs them is s2mc.workloads.cipher_sim.
"""
from pathlib import Path

HERE = Path(__file__).resolve().parent
#: The Rz program of each style.
SOURCES = {"bytes": HERE / "aes_bytes.rz", "ttable": HERE / "aes_ttable.rz"}
