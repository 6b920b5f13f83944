"""The studies: every experiment of s2mc as a spec file (studies/*.toml) run by one runner, here or on
Dask, and the studies that drive the engines and backends directly (fidelity, seeds_native, lab).
It sits above the components and beside analysis/, whose readers it uses to write and check records."""
