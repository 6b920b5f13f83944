"""Shared pytest setup: keep hypothesis deterministic and quick by default (profile 'ci');
`HYPOTHESIS_PROFILE=thorough` runs thousands of examples."""
import os
import stat

import pytest
from hypothesis import HealthCheck, settings

settings.register_profile("ci", max_examples=300, deadline=None, derandomize=True,
                          suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("thorough", max_examples=5000, deadline=None,
                          suppress_health_check=[HealthCheck.too_slow])
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))

# The OpenCL backend stores its calibrated segment sizes in a cache file (s2mc.gpu.opencl.cache_path):
# tests (and the commands they start) keep theirs in a folder of their own, never the user's cache.
if "S2MC_CACHE_DIR" not in os.environ:
    import atexit
    import shutil
    import tempfile
    os.environ["S2MC_CACHE_DIR"] = tempfile.mkdtemp(prefix="s2mc-test-cache-")
    atexit.register(shutil.rmtree, os.environ["S2MC_CACHE_DIR"], True)


@pytest.fixture
def null_device(tmp_path):
    """A character device that discards what is written, to test outputs onto devices with.

    As root this is a private node (1, 3) in tmp_path, not /dev/null itself: a regression that
    replaced device nodes would otherwise replace the machine's /dev/null. Without root /dev/null is
    safe to use, since only root can replace it."""
    if os.geteuid() != 0:
        return "/dev/null"
    node = tmp_path / "null"
    try:
        os.mknod(node, stat.S_IFCHR | 0o666, os.makedev(1, 3))
        with open(node, "wb") as f:
            f.write(b"x")
    except OSError as exc:
        pytest.skip(f"cannot make a private character device ({exc.strerror})")
    return str(node)


def undrawn_save(fig, path):
    """plots._save without the drawing: the figure is made, closed, and its file left empty. A PNG
    takes a second or more to render; tests that read only the report's text do not need it."""
    from s2mc.analysis import plots
    plots.plt.close(fig)
    with open(path, "wb"):
        pass
    from pathlib import Path
    return Path(path)


@pytest.fixture
def undrawn(monkeypatch):
    """The report's figures not drawn (undrawn_save) for one test."""
    from s2mc.analysis import plots
    monkeypatch.setattr(plots, "_save", undrawn_save)
