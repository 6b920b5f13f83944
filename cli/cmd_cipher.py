"""`s2mc cipher`: any cipher the simulated programs implement (AES, Camellia) on the simulated S2
multicore, over the same grid as `s2mc aes` (docs/camellia-on-s2.md).

    s2mc cipher --cipher camellia --cores 1,2,3,4 --bytes 64,256 --mode ecb,ctr
    s2mc cipher --cipher aes,camellia --style ttable,sp --cores 1,2,4 --bytes 1K --out results/ciphers.parquet

Every option of `s2mc aes` works the same; --style takes the styles of every chosen cipher (aes:
bytes, ttable; camellia: sp) and defaults to each cipher's first. Every run is checked against
`cryptography`. `s2mc aes` is the shorthand for `s2mc cipher --cipher aes`.
"""
from __future__ import annotations

import click

from s2mc.workloads.cipher_sim.runner import ALL_STYLES, CIPHERS

from .cmd_aes import grid_options, run_command
from .options import Choices


@click.command("cipher")
@click.option("--cipher", "ciphers", type=Choices(tuple(CIPHERS)), default="aes", show_default=True,
              help="aes and/or camellia (comma-separated).")
@grid_options(ALL_STYLES, None, "The programs: aes: bytes (one byte per word) and/or ttable (four bytes per word); "
              "camellia: sp (SP-tables on 32-bit words). Each cipher runs the styles that are its own "
              "[default: each cipher's first: bytes, sp].", experiment="cipher")
def cipher_cmd(ctx, ciphers, styles, **options):
    """A block cipher on the simulated multicore: the grid of `s2mc aes` (cores x bytes x key size,
    mode, direction, style, partition, memory latency, arbitration, engine) for each cipher of
    --cipher, every result checked against `cryptography`."""
    ciphers = tuple(dict.fromkeys(ciphers))
    if not styles:
        styles = tuple(CIPHERS[c].styles[0] for c in ciphers)
    run_command(ctx, "cipher", ciphers, styles=styles, **options)


COMMANDS = [cipher_cmd]
