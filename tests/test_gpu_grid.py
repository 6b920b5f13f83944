"""The CUDA benchmark grid as a library (s2mc.gpu.grid), on any machine: the GPU calls are replaced
by fakes that report a known throughput, so which measurements run, the records rows, the skipped
device-resident sizes and the Markdown table are checked without a GPU."""
import pytest

from s2mc import gpu
from s2mc.analysis import records
from s2mc.gpu.grid import GpuGrid, markdown_table, run_grid, variant_of
from gpu_fakes import install_fake_gpu

MIB = 1 << 20


@pytest.fixture
def fake_gpu(monkeypatch):
    """A GPU with 10 MiB of memory at 100 GB/s (best run 110 GB/s); returns the calls made."""
    return install_fake_gpu(monkeypatch, 10 * MIB)


def test_configs_sweep_streams_only_for_host():
    grid = GpuGrid(kernels=("coarse", "optimised"), sizes=(MIB, 4 * MIB), streams=(1, 2, 4))
    configs = grid.configs()
    # per kernel and size: keystream, device, host x 3 stream counts
    assert len(configs) == 2 * 2 * (1 + 1 + 3)
    assert {c[3] for c in configs if c[1] != "host"} == {0}


@pytest.mark.parametrize("kernel,measure,streams,variant", [
    ("coarse", "keystream", 0, "coarse/keystream"),
    ("extended-4096", "device", 0, "extended-4096/device-resident"),
    ("optimised", "host", 1, "optimised/host-serial"),
    ("optimised", "host", 4, "optimised/host-overlap-s4"),
])
def test_variant_names(kernel, measure, streams, variant):
    assert variant_of(kernel, measure, streams) == variant


def test_run_grid_rows_and_skipped_device_sizes(fake_gpu):
    logged = []
    grid = GpuGrid(kernels=("coarse",), sizes=(MIB, 8 * MIB), streams=(1, 4), key_bits=256, op="ecb-enc")
    summaries, rows, plat = run_grid(grid, run_id="cuda-test", experiment="exp", log=logged.append)
    assert plat["gpu"] == "Fake"
    # device-resident 8 MiB needs 16 MiB > 0.85 x 10 MiB: skipped, and said so
    assert ("coarse", "device", 8 * MIB, 1) not in fake_gpu
    assert len(fake_gpu) == 2 * 4 - 1 and len(summaries) == len(fake_gpu)
    assert "skipping coarse device-resident 8MB: needs 2x that in GPU memory" in logged
    df = records.make_records(rows)     # validates against the schema
    assert len(df) == 2 * len(summaries)
    assert set(df["run_id"]) == {"cuda-test"} and set(df["experiment"]) == {"exp"}
    assert set(df["workload"]) == {"aes-256-ecb-enc"} and set(df["source"]) == {"cuda"}
    host = df[df["variant"].str.contains("host")]
    assert set(host["metric"]) == {"seconds", "bytes_per_second"}
    assert set(df[~df["variant"].str.contains("host")]["metric"]) == {"kernel_seconds", "bytes_per_second"}
    bps = df[df["metric"] == "bytes_per_second"]["value"]
    assert (abs(bps - 1e11) < 1).all()
    assert all(s["gbps"] == pytest.approx(800.0) and s["best_gbps"] == pytest.approx(880.0) for s in summaries)


def test_markdown_table(fake_gpu):
    summaries, _, _ = run_grid(GpuGrid(kernels=("coarse",), sizes=(MIB, 8 * MIB), measures=("device", "host"),
                                       streams=(4,)), run_id="r")
    assert markdown_table(summaries) == "\n".join([
        "| kernel | measure | 1MB | 8MB |",
        "|---|---|---:|---:|",
        "| coarse | device-resident | 800.0 | – |",
        "| coarse | host-overlap-s4 | 800.0 | 800.0 |"])
