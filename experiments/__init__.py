"""The studies: every grid experiment of s2mc as a spec file (studies/*.toml, read by specs.py) run
by one runner (registry.py), here or a task per configuration on Dask (sweep.py); the studies that
drive the engines and backends themselves (fidelity.py, seeds_native.py, the lab notebooks in
lab.py); and what `s2mc demo` runs, in order (demo.py). It sits above the components and above
analysis/, whose records module it writes through; what reads the results is in analysis/."""
