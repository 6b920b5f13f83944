"""Shared pytest setup: keep hypothesis deterministic and quick by default (profile 'ci');
`HYPOTHESIS_PROFILE=thorough` runs thousands of examples."""
import os

from hypothesis import HealthCheck, settings

settings.register_profile("ci", max_examples=300, deadline=None, derandomize=True,
                          suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("thorough", max_examples=5000, deadline=None,
                          suppress_health_check=[HealthCheck.too_slow])
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))
