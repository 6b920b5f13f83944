"""The native AES implementations as pytest parameters, skipped where this CPU cannot run them."""
import pytest

from s2mc.workloads import native

if not native.available():  # pragma: no cover - only with S2MC_WITH_NATIVE=OFF
    pytest.skip("native AES extension not built", allow_module_level=True)

SUPPORTED = set(native.supported_impls())
IMPLS = [pytest.param(name, marks=pytest.mark.skipif(name not in SUPPORTED,
                                                     reason=f"this CPU cannot run '{name}'"))
         for name in native.IMPLS]
