"""Readers of records: the schema, derived columns, the bus model, the papers' numbers, the seed
comparisons, plots and the report. Nothing here runs an engine, a workload or a backend (it imports
only s2mc.common; tests/test_cli_commands.py checks), so a report can be written anywhere from
records alone. The studies that write the records are s2mc.experiments."""
