"""Records, reference tables, plots and reports."""
