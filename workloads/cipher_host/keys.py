"""Keys, IVs and counters on the host: hex parsing, where a key comes from, CTR counter arithmetic.

A key given as `--key HEX` is visible to every local user while the command runs (`ps`, and
/proc/PID/cmdline is world-readable) and usually lands in the shell history; `key_from_options`
also takes it from a file, an environment variable or stdin (docs/native.md).
"""
from __future__ import annotations

import os
import sys

from s2mc.common.errors import S2mcError

_KEY_DIGITS = (32, 48, 64)
#: A key or IV file holds a few dozen characters; anything much longer is the wrong file.
_MAX_FILE_BYTES = 4096
#: How messages name a cipher (every cipher here has 128-bit blocks and 128/192/256-bit keys).
_CIPHER_NAMES = {"aes": "AES", "camellia": "Camellia"}


def cipher_title(cipher: str) -> str:
    """The cipher's name as messages write it: AES, Camellia (others upper-cased)."""
    return _CIPHER_NAMES.get(cipher, cipher.upper())


def counter_add(iv: bytes, blocks: int) -> bytes:
    """The counter block `blocks` blocks after `iv` (128-bit big-endian, wrapping mod 2^128,
    NIST SP 800-38A)."""
    return ((int.from_bytes(iv, "big") + blocks) % (1 << 128)).to_bytes(16, "big")


def check_key_iv(key: bytes, iv: bytes | None, *, where: str = "", cipher: str = "aes") -> None:
    """S2mcError unless key is 16/24/32 bytes and iv (when given) 16 bytes."""
    prefix = f"{where}: " if where else ""
    if len(key) not in (16, 24, 32):
        raise S2mcError(f"{prefix}key must be 16, 24 or 32 bytes ({cipher_title(cipher)}-128/192/256), "
                        f"not {len(key)}")
    if iv is not None and len(iv) != 16:
        raise S2mcError(f"{prefix}IV must be 16 bytes, not {len(iv)}")


def _parse_hex(text: str, what: str, key: bool, cipher: str = "aes") -> bytes:
    s = (text or "").strip()
    if s[:2].lower() == "0x":
        s = s[2:]
    if not s:
        raise S2mcError(f"{what}: empty hex string")
    bad = next((c for c in s if c not in "0123456789abcdefABCDEF"), None)
    if bad is not None:
        raise S2mcError(f"{what}: not a hex string (bad character {bad!r})")
    if key and len(s) not in _KEY_DIGITS:
        raise S2mcError(f"{what}: {len(s)} hex digits; {cipher_title(cipher)} keys need 32, 48 or 64 "
                        "(128, 192 or 256 bits)")
    if not key and len(s) != 32:
        raise S2mcError(f"{what}: {len(s)} hex digits; the IV must be exactly 32 (16 bytes)")
    return bytes.fromhex(s)


def parse_key_hex(text: str, what: str = "--key", cipher: str = "aes") -> bytes:
    """A 128/192/256-bit key from 32/48/64 hex digits (an optional 0x prefix); S2mcError naming
    `what` (and `cipher`, for its key sizes) otherwise."""
    return _parse_hex(text, what, True, cipher)


def parse_iv_hex(text: str, what: str = "--iv") -> bytes:
    """The 16-byte initial counter block from 32 hex digits; S2mcError naming `what` otherwise."""
    return _parse_hex(text, what, False)


def _read_file(path: str, what: str) -> str:
    try:
        with open(path, "rb") as f:
            raw = f.read(_MAX_FILE_BYTES + 1)
    except FileNotFoundError:
        raise S2mcError(f"{what}: no such file") from None
    except IsADirectoryError:
        raise S2mcError(f"{what}: is a directory, not a file") from None
    except OSError as exc:
        raise S2mcError(f"{what}: cannot read ({exc.strerror or exc})") from None
    if len(raw) > _MAX_FILE_BYTES:
        raise S2mcError(f"{what}: more than {_MAX_FILE_BYTES} bytes; expected one line of hex digits")
    if raw.startswith(b"\xef\xbb\xbf"):   # a UTF-8 byte-order mark, as some editors write
        raw = raw[3:]
    try:
        return raw.decode("ascii")
    except UnicodeDecodeError:
        raise S2mcError(f"{what}: not a hex string (the file is not text)") from None


def _read_stdin(what: str, stdin, prompt: str) -> str:
    stdin = stdin if stdin is not None else sys.stdin
    if stdin is None:
        raise S2mcError(f"{what}: no stdin to read from")
    if stdin.isatty():
        import click  # only for the hidden-input prompt
        return click.prompt(prompt, hide_input=True, err=True)
    line = stdin.readline(_MAX_FILE_BYTES + 1)
    if not line:
        raise S2mcError(f"{what}: stdin is empty")
    return line


def hex_from_options(name: str, value: str | None, file: str | None, env: str | None, *,
                     key: bool, stdin=None, required: bool = True, cipher: str = "aes") -> bytes | None:
    """The key (key=True) or IV from exactly one of `--NAME HEX` (`-` reads one line from stdin,
    without echo on a terminal), `--NAME-file FILE` or `--NAME-env VAR`. Errors name the option
    and the file or variable."""
    given = [(opt, v) for opt, v in ((f"--{name}", value), (f"--{name}-file", file), (f"--{name}-env", env))
             if v is not None]
    if len(given) > 1:
        raise S2mcError(f"{' and '.join(o for o, _ in given)}: give only one of them")
    if not given:
        if required:
            raise S2mcError(f"give the {name} with --{name} HEX, --{name}-file FILE or --{name}-env VAR")
        return None
    opt, v = given[0]
    def parse(text: str, what: str) -> bytes:
        return parse_key_hex(text, what, cipher) if key else parse_iv_hex(text, what)
    if opt == f"--{name}-file":
        what = f"{opt} {v}"
        return parse(_read_file(v, what), what)
    if opt == f"--{name}-env":
        what = f"{opt} {v}"
        text = os.environ.get(v)
        if text is None:
            raise S2mcError(f"{what}: environment variable {v} is not set")
        return parse(text, what)
    if v == "-":
        what = f"{opt} - (stdin)"
        return parse(_read_stdin(what, stdin, f"{cipher_title(cipher)} {name} (hex)"), what)
    return parse(v, opt)


__all__ = ["cipher_title", "counter_add", "check_key_iv", "parse_key_hex", "parse_iv_hex", "hex_from_options"]
