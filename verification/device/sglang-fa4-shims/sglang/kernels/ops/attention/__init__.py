"""Stub package file: only the FA4 wrapper and its vendored kernels are carried (errkb verification)."""
