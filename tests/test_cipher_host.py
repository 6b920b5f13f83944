"""s2mc.workloads.cipher_host, the host-side AES pieces both backends share: counter arithmetic, key and
IV parsing, where a key comes from; and the layering it exists for: the native and CUDA backends
depend on it and never on each other (Python imports, C++ include paths)."""
import errno
import io
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from imports import imported

from s2mc.common.errors import S2mcError
from s2mc.workloads import cipher_host
from s2mc.workloads.cipher_host import check_key_iv, counter_add, hex_from_options, parse_iv_hex, parse_key_hex

REPO = Path(__file__).resolve().parent.parent
NATIVE, GPU, HOST = REPO / "workloads" / "native", REPO / "gpu-backends", REPO / "workloads" / "cipher_host"


@pytest.mark.parametrize("iv,n,want", [
    ("00" * 16, 1, "00" * 15 + "01"),
    ("00" * 15 + "ff", 1, "00" * 14 + "0100"),                   # a byte carry
    ("00" * 8 + "ff" * 8, 1, "00" * 7 + "01" + "00" * 8),        # the 2^64 carry
    ("ff" * 16, 1, "00" * 16),                                   # the 2^128 wrap
    ("ff" * 16, 3, "00" * 15 + "02"),
    ("00" * 12 + "ffffffff", 0x100000001, "00" * 11 + "0200000000"),
])
def test_counter_add(iv, n, want):
    assert counter_add(bytes.fromhex(iv), n).hex() == want


def test_both_backends_use_the_one_counter_and_parsers():
    from s2mc import gpu
    from s2mc.workloads import native
    assert native.counter_add is gpu.counter_add is cipher_host.counter_add
    assert native.parse_key_hex is cipher_host.parse_key_hex


@pytest.mark.parametrize("text,want", [
    ("000102030405060708090a0b0c0d0e0f", bytes(range(16))),
    ("0x000102030405060708090A0B0C0D0E0F\n", bytes(range(16))),
    ("00" * 24, bytes(24)), ("ff" * 32, b"\xff" * 32),
])
def test_parse_key_hex(text, want):
    assert parse_key_hex(text) == want


@pytest.mark.parametrize("text,message", [
    ("", "--key: empty hex string"), ("0x", "--key: empty hex string"),
    ("00" * 15 + "0g", "--key: not a hex string (bad character 'g')"),
    ("00" * 20, "--key: 40 hex digits; AES keys need 32, 48 or 64 (128, 192 or 256 bits)"),
])
def test_parse_key_hex_errors(text, message):
    with pytest.raises(S2mcError) as e:
        parse_key_hex(text)
    assert str(e.value) == message


def test_parse_iv_hex():
    assert parse_iv_hex("f0" * 16) == b"\xf0" * 16
    with pytest.raises(S2mcError, match=r"^--iv-env V: 30 hex digits; the IV must be exactly 32 \(16 bytes\)$"):
        parse_iv_hex("00" * 15, "--iv-env V")


@pytest.mark.parametrize("key,iv,message", [
    (bytes(15), bytes(16), "key must be 16, 24 or 32 bytes (AES-128/192/256), not 15"),
    (bytes(16), bytes(12), "IV must be 16 bytes, not 12"),
])
def test_check_key_iv(key, iv, message):
    with pytest.raises(S2mcError) as e:
        check_key_iv(key, iv)
    assert str(e.value) == message
    check_key_iv(bytes(32), None)


class _Stdin(io.StringIO):
    def isatty(self):
        return False


def test_hex_from_options_sources(tmp_path, monkeypatch):
    key = "2b7e151628aed2a6abf7158809cf4f3c"
    (tmp_path / "k").write_text(key + "\n")
    monkeypatch.setenv("S2MC_K", key)
    want = bytes.fromhex(key)
    assert hex_from_options("key", key, None, None, key=True) == want
    assert hex_from_options("key", None, str(tmp_path / "k"), None, key=True) == want
    assert hex_from_options("key", None, None, "S2MC_K", key=True) == want
    assert hex_from_options("key", "-", None, None, key=True, stdin=_Stdin(key + "\nrest\n")) == want
    assert hex_from_options("iv", None, None, None, key=False, required=False) is None


def test_hex_from_options_reads_one_line_of_stdin():
    stdin = _Stdin("00" * 16 + "\n" + "11" * 16 + "\n")
    assert hex_from_options("iv", "-", None, None, key=False, stdin=stdin) == bytes(16)
    assert stdin.read() == "11" * 16 + "\n"


def test_unreadable_key_file(tmp_path, monkeypatch):
    def deny(*a, **kw):
        raise PermissionError(13, "Permission denied")

    (tmp_path / "k").write_text("00" * 16)
    monkeypatch.setattr("builtins.open", deny)
    with pytest.raises(S2mcError, match=r"^--key-file .*/k: cannot read \(Permission denied\)$"):
        hex_from_options("key", None, str(tmp_path / "k"), None, key=True)


def test_key_file_that_is_a_folder(tmp_path):
    with pytest.raises(S2mcError, match=r"^--key-file .*: is a directory, not a file$"):
        hex_from_options("key", None, str(tmp_path), None, key=True)


# -- layering --------------------------------------------------------------------------------------

def _imports(folder: Path) -> dict[str, set[str]]:
    """Every module each Python file of `folder` imports (tests/imports.py)."""
    return {str(path.relative_to(REPO)): imported(path) for path in folder.rglob("*.py")}


def _uses(imports: dict[str, set[str]], prefix: str) -> list[str]:
    return sorted(f"{f}: {m}" for f, ms in imports.items() for m in ms if m == prefix or m.startswith(prefix + "."))


def test_native_never_imports_gpu():
    assert _uses(_imports(NATIVE), "s2mc.gpu") == []


def test_gpu_never_imports_native():
    assert _uses(_imports(GPU / "gpu"), "s2mc.workloads.native") == []


def test_cipher_host_imports_neither_backend():
    imports = _imports(HOST)
    assert _uses(imports, "s2mc.gpu") == [] and _uses(imports, "s2mc.workloads.native") == []
    assert {m.split(".")[1] for ms in imports.values() for m in ms if m.startswith("s2mc.")} <= {"common", "isa", "workloads"}


def test_the_output_module_depends_on_nothing_of_s2mc_above_isa():
    assert not any(m.startswith("s2mc") for m in imported(REPO / "common" / "outputs.py"))


def test_cpp_key_schedule_lives_in_cipher_host():
    assert (HOST / "include" / "s2mc_cipher" / "key_schedule.h").is_file()
    assert not (NATIVE / "include" / "s2mc_aes" / "key_schedule.h").exists()
    gpu_cmake = (GPU / "CMakeLists.txt").read_text()
    native_cmake = (NATIVE / "CMakeLists.txt").read_text()
    assert "workloads/native" not in gpu_cmake and "gpu-backends" not in native_cmake
    for cmake in (gpu_cmake, native_cmake):
        assert "s2mc_cipher_key_schedule" in cmake and "cipher_host" in cmake
    # The CUDA sources include no header of the native library (s2mc_aes/aes.h), only the shared one.
    for src in (GPU / "cuda").iterdir():
        for inc in re.findall(r'#include\s+"([^"]+)"', src.read_text(encoding="utf-8")):
            # the shared headers (key_schedule.h, camellia.h) live in cipher_host/include
            assert not inc.startswith("s2mc_aes/"), (src.name, inc)
            assert not inc.startswith("s2mc_cipher/") or (HOST / "include" / inc).is_file(), (src.name, inc)


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("cmake") is None, reason="cmake not installed")
def test_standalone_gpu_build_configures(tmp_path):
    """run_on_gpu.sh's Python-free build: `cmake -S gpu-backends` on its own (about 20 s with nvcc)."""
    r = subprocess.run(["cmake", "-S", str(GPU), "-B", str(tmp_path / "b")], capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr


class _Ring:
    """A file ring's binding, answering crypt_fds with a fixed end state."""

    def __init__(self, stage, err=0, message=""):
        self.end = (0, err, stage, message)

    def crypt_fds(self, in_fd, out_fd, offset, length):
        return self.end


@pytest.mark.parametrize("stage,err,message,line", [
    ("eof", 0, "", "in.bin: input file shrank while it was being read"),
    ("device", 0, "cudaErrorLaunchFailure", "gpu: cudaErrorLaunchFailure"),
    ("read", errno.EIO, "", f"in.bin: cannot read input ({os.strerror(errno.EIO)})"),
    ("write", errno.ENOSPC, "", f"out.bin: cannot write output ({os.strerror(errno.ENOSPC)})"),
])
def test_a_ring_s_end_states_are_one_line_errors(stage, err, message, line):
    from s2mc.workloads.cipher_host import ring_range_transform
    with pytest.raises(S2mcError) as e:
        ring_range_transform(_Ring(stage, err, message), "in.bin", "out.bin", "gpu")(3, 4, 0, 16)
    assert str(e.value) == line
    ring_range_transform(_Ring(""), "in.bin", "out.bin", "gpu")(3, 4, 0, 16)   # done: no error


def test_running_total_turns_chunk_sizes_into_bytes_done():
    from s2mc.workloads.cipher_host import running_total
    seen = []
    report = running_total(seen.append)
    for n in (16, 32, 5):
        report(n)
    assert seen == [16, 48, 53]
    assert running_total(True) is True and running_total(False) is False and running_total(None) is False
