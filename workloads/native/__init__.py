"""Native CPU AES (OpenMP)."""
