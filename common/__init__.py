"""What every component of s2mc shares and nothing else provides: the one error type (errors.py),
how every file is written (outputs.py), sizes like 16K (units.py) and how every real-hardware timing
is taken (measure.py). It imports nothing of s2mc."""
