"""Workloads: programs for the simulated S2 machine and the host-side runners."""
