"""A fixed threshold for the C heap's memory maps (glibc), so that freed large arrays go back to the system.

glibc's malloc serves a block of at least ``M_MMAP_THRESHOLD`` (128 KiB) with its own memory map,
unmapped when freed; but freeing such a block raises the threshold to its size (up to 32 MiB), and
from then on blocks that large come from the heap, where a small block still in use above them
keeps the freed pages resident (mallopt(3), M_MMAP_THRESHOLD). ``simulate`` allocates arrays of a
60 s chunk (about 10 MB each) once per chunk: with the moving threshold its resident set grew by
about 10 MB a chunk (docs/soak.md, Memory). Setting the threshold explicitly turns that adjustment off.
"""

from __future__ import annotations

import ctypes
import ctypes.util

M_MMAP_THRESHOLD = -3  # mallopt's parameter number (glibc malloc.h)
MMAP_THRESHOLD = 128 * 1024  # [bytes] glibc's default, kept fixed


def fixed_mmap_threshold() -> None:
    """Fix glibc's M_MMAP_THRESHOLD at its default; nothing where the C library has no mallopt."""
    libc = ctypes.CDLL(ctypes.util.find_library("c"))
    if hasattr(libc, "mallopt"):
        libc.mallopt(M_MMAP_THRESHOLD, MMAP_THRESHOLD)
