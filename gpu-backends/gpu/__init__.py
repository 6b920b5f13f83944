"""CUDA AES backend (Python side)."""
