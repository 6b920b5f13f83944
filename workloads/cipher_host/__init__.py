"""Host-side AES utilities shared by both AES backends: `s2mc.workloads.cipher_host`.

The native CPU backend (s2mc.workloads.native) and the CUDA backend (s2mc.gpu) both depend on this
package, and it depends on neither, so the two backends never import each other. The C++ half is
include/s2mc_cipher/key_schedule.h (the FIPS-197 key schedule and T-tables both libraries compile in).

    from s2mc.workloads import cipher_host
    cipher_host.counter_add(iv, n)                  # IV + n mod 2^128 (SP 800-38A counter)
    cipher_host.parse_key_hex("000102...")          # 16/24/32 bytes, or S2mcError naming the option
    cipher_host.hex_from_options("key", None, "k.hex", None, key=True)   # --key / --key-file / --key-env
    cipher_host.crypt_file("in", "out", transform)  # streaming, atomic output, = openssl enc -aes-*-ctr

Output files follow s2mc.common.outputs (atomic replace, devices and FIFOs written through, `-` = stdout).
"""
from __future__ import annotations

from .files import (DEFAULT_CHUNK_BYTES, MAX_CHUNK_BYTES, RangeTransform, Transform, check_input, crypt_file, host_memory,
                    ring_range_transform, ring_slots, running_total, stream_transform)
from .keys import check_key_iv, cipher_title, counter_add, hex_from_options, parse_iv_hex, parse_key_hex

__all__ = ["DEFAULT_CHUNK_BYTES", "MAX_CHUNK_BYTES", "host_memory", "ring_range_transform", "ring_slots", "running_total", "RangeTransform", "Transform", "check_input", "crypt_file",
           "stream_transform",
           "check_key_iv", "cipher_title", "counter_add", "hex_from_options", "parse_iv_hex", "parse_key_hex"]
