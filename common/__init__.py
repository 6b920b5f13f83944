"""What every component of s2mc shares and nothing else provides: the one error type (errors.py),
how every file is written (outputs.py) and sizes like 16K (units.py). It imports nothing of s2mc."""
