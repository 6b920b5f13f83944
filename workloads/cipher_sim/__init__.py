"""AES on the simulated S2 multicore (docs/aes-on-s2.md).

    from s2mc.workloads.cipher_sim import run_aes, AesConfig
    r = run_aes(data, key, mode="ctr", counter=iv, style="ttable", cores=8, partition="extended")

The Rz programs are s2mc.workloads.aes's aes_bytes.rz and aes_ttable.rz; runner.py is the host side.
"""
from .runner import (DIRECTIONS, KEY_BITS, MODES, PARTITIONS, STYLES, AesConfig, AesMismatch,
                     AesRun, data_words, program, reference, run_aes, words_needed)

__all__ = ["AesConfig", "AesMismatch", "AesRun", "DIRECTIONS", "KEY_BITS", "MODES", "PARTITIONS",
           "STYLES", "data_words", "program", "reference", "run_aes", "words_needed"]
