"""The native benchmark grid as a library (s2mc.workloads.native.grid): which measurements a grid
makes, the records rows it returns, and the summary line. Timings are never asserted."""
import pytest

from s2mc.analysis import records
from s2mc.common.units import human_size
from s2mc.workloads import native

if not native.available():  # pragma: no cover - only with S2MC_WITH_NATIVE=OFF
    pytest.skip("native AES extension not built", allow_module_level=True)

from s2mc.workloads.native.grid import NativeGrid, format_summary, run_grid, summary_header  # noqa: E402

FAST = dict(min_seconds=0, min_reps=1)


def test_configs_sweep_block_sizes_only_for_extended():
    grid = NativeGrid(threads=(1, 2), sizes=(64, 4096), impls=("ttable",),
                      strategies=("coarse", "extended"), block_bytes=(512, 1024, 2048))
    configs = grid.configs()
    # coarse: 2 threads x 2 sizes; extended: 3 block sizes x 2 x 2
    assert len(configs) == 4 + 12
    assert {c[2] for c in configs if c[1] == "coarse"} == {512}
    assert {c[2] for c in configs if c[1] == "extended"} == {512, 1024, 2048}
    # multi: one strategy, the first block size
    multi = NativeGrid(threads=(1, 2), sizes=(64,), impls=("ttable",), strategies=("coarse", "extended"),
                       block_bytes=(512, 1024), multi=True).configs()
    assert [c[1:3] for c in multi] == [("multi", 512), ("multi", 512)]


def test_auto_resolves_to_the_best_implementation_once():
    grid = NativeGrid(impls=("auto", native.best_impl()), sizes=(16,))
    assert {c[0] for c in grid.configs()} == {native.best_impl()}
    assert len(grid.configs()) == 1


def test_run_grid_rows_are_valid_records():
    seen = []
    grid = NativeGrid(threads=(1, 2), sizes=(1000, 4096), impls=("ttable",),
                      strategies=("contiguous", "extended"), block_bytes=(512,), vs_openssl=True, **FAST)
    summaries, rows = run_grid(grid, run_id="native-test", experiment="exp", log=seen.append)
    assert seen == summaries and len(summaries) == 2 * 2 * 2
    df = records.make_records(rows)      # validates against the schema
    assert set(df["run_id"]) == {"native-test"} and set(df["experiment"]) == {"exp"}
    assert set(df["variant"]) == {"contiguous", "extended-512", "evp-contiguous"}
    # one OpenSSL baseline per (threads, size), shared by both strategies
    ossl = df[(df["engine"] == "openssl") & (df["metric"] == "seconds")]
    assert sorted(zip(ossl["cores"], ossl["bytes"])) == [(1, 1000), (1, 4096), (2, 1000), (2, 4096)]
    ours = df[(df["engine"] == "ttable") & (df["metric"] == "bytes_per_second")]
    for s in summaries:
        row = ours[(ours["cores"] == s["threads"]) & (ours["bytes"] == s["bytes"])
                   & (ours["variant"] == ("extended-512" if s["strategy"] == "extended" else "contiguous"))]
        assert row["value"].iloc[0] == pytest.approx(s["gb_per_s"] * 1e9)


def test_multi_counts_every_threads_buffer():
    summaries, rows = run_grid(NativeGrid(threads=(2,), sizes=(4096,), impls=("ttable",), multi=True,
                                          **FAST), run_id="r")
    assert summaries[0]["strategy"] == "multi" and summaries[0]["total_bytes"] == 2 * 4096
    assert {r["bytes"] for r in rows} == {2 * 4096} and {r["variant"] for r in rows} == {"multi"}


def test_summary_line():
    s = dict(cipher="aes", key_bits=128, impl="aesni", strategy="extended", block_bytes=1024, threads=4,
             bytes=16 << 20, gb_per_s=12.3456, cycles_per_byte=0.5, spread=0.012)
    assert format_summary(s) == ("aes-128         aesni             extended/1024     4 thr        16M     "
                                 "12.35 GB/s   ±1.2%    0.500 c/B")
    s.update(strategy="multi", block_bytes=None, openssl_gb_per_s=10.0, ratio=0.81, openssl_spread=0.003,
             ratio_spread=0.02)
    line = format_summary(s)
    assert line == ("aes-128         aesni             multi             4 x          16M     "
                    "12.35 GB/s   ±1.2%    0.500 c/B  | openssl   10.00 GB/s   ±0.3%  ratio 0.810x   ±2.0%")
    head = summary_header(True)
    # every column name ends where its figures end
    import re
    ends = lambda text, pattern: [m.end() for m in re.finditer(pattern, text)]  # noqa: E731
    assert ends(head, "spread") == ends(line, "%")
    assert ends(head, r"throughput") == ends(line, "GB/s")
    assert ends(head, "cycles/B") == ends(line, "c/B") and ends(head, "ratio") == ends(line, r"\d+x")
    # the longest implementation and cipher names keep the columns where the header puts them
    s.update(impl="table-6-5-5-5-5-6", cipher="hierocrypt3")
    assert format_summary(s).index("multi") == summary_header().index("strategy")
    assert format_summary(s).index("table-6") == summary_header().index("impl")


def test_native_lines_keep_ciphers_apart():
    """AES and Camellia rows of one `s2mc native` run read apart: the cipher and key size lead each line."""
    rows = [format_summary(dict(cipher=c, key_bits=b, impl="auto", strategy="contiguous", threads=1, bytes=4096,
                                gb_per_s=1.0, cycles_per_byte=1.0, spread=0.0)) for c, b in (("aes", 128), ("camellia", 256))]
    head = summary_header()
    assert head.split()[0] == "cipher" and [r.split()[0] for r in rows] == ["aes-128", "camellia-256"]


@pytest.mark.parametrize("n,text", [(16384, "16K"), (1 << 20, "1M"), (3 << 30, "3G"), (1000, "1000"),
                                    (1536, "1536"), (0, "0")])
def test_human_size(n, text):
    assert human_size(n) == text


def test_run_grid_refuses_openssl_for_a_cipher_it_lacks():
    """The API's own guard (the CLI refuses earlier): OpenSSL has no SC2000, so nothing is measured."""
    from s2mc.common.errors import S2mcError
    grid = NativeGrid(threads=(1,), sizes=(4096,), cipher="sc2000", vs_openssl=True, **FAST)
    with pytest.raises(S2mcError, match="OpenSSL has no sc2000: --vs-openssl is for aes and camellia"):
        run_grid(grid, run_id="r")
