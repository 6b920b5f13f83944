"""A fake GPU for tests on machines without one: s2mc.gpu's bench and platform calls replaced by
functions that report a known throughput (100 GB/s, best run 110 GB/s) and record each call."""
from s2mc import gpu

MIB = 1 << 20


class Calls(list):
    """The bench calls, and in .timing each call's (warmup, min_seconds)."""

    def __init__(self):
        super().__init__()
        self.timing: list[tuple[int, float]] = []


def install_fake_gpu(monkeypatch, mem_bytes: int = 10 * MIB) -> list:
    """Makes s2mc.gpu report a GPU of `mem_bytes`; returns the list the bench calls are appended to
    as (kernel, measure, nbytes, streams)."""
    calls = Calls()

    def bench(kernel, measure, *, key_bits, nbytes, reps, op, ext_bytes, threads, streams, chunk_bytes,
              cipher="aes", warmup=1, min_seconds=0.0):
        calls.timing.append((warmup, min_seconds))
        calls.append((kernel, measure, nbytes, streams) if cipher == "aes" else
                     (kernel, measure, nbytes, streams, cipher))
        return {"kernel": kernel, "measure": measure, "bytes": nbytes, "seconds": nbytes / 1e11,
                "best_seconds": nbytes / 1.1e11, "grid": 8, "threads": threads,
                "streams": streams if measure == "host" else 0}

    monkeypatch.setattr(gpu, "status", lambda: {"gpu_present": True, "reason": ""})
    monkeypatch.setattr(gpu, "platform_info", lambda: {"gpu": "Fake", "device": {"global_mem_bytes": mem_bytes}})
    monkeypatch.setattr(gpu, "bench", bench)
    return calls
