"""glibc's heap thresholds for a process that serves for hours: freed memory is kept for reuse.

glibc hands a block of 128 KiB or more to the kernel as its own mapping and gives it back when it
is freed, and it gives back free memory at the top of a heap past a threshold of about the same.
It raises both as it sees large blocks freed, but a server answering a deep chain (a preview of
several MiB, encoded, framed and written, and thousands of path strings of a kilobyte each in the
worker) frees most of what one request made before the next one starts, so each answer's memory
was handed back and faulted in again: about 7,500 minor page faults per preview + scopes pair at
depth 1,000, about 1,400 with the thresholds below (docs/benchmarks.md, "Depth").

Both are set to 32 MiB, the ceiling glibc's own adjustment would reach: a block that size or
larger is still mapped on its own, and at most that much free memory is kept at the top of a
heap. What the process keeps is bounded by what it once used (``bench/memory.py``: its resident
size after loading fell from 105 to 97-98 MB). Elsewhere (another C library, another system) this
does nothing.
"""

from __future__ import annotations

import sys

# mallopt's parameters (glibc's malloc.h).
_M_TRIM_THRESHOLD = -1
_M_MMAP_THRESHOLD = -3
KEPT_BYTES = 32 * 1024 * 1024


def keep_freed_memory() -> bool:
    """Set glibc's thresholds; whether they were set (False off glibc)."""
    if not sys.platform.startswith("linux"):
        return False
    import ctypes  # only here: no other command needs it

    try:
        libc = ctypes.CDLL(None)
        if not hasattr(libc, "gnu_get_libc_version"):
            return False  # not glibc: another allocator, other rules
        mallopt = libc.mallopt
    except (OSError, AttributeError):
        return False
    mallopt.argtypes = (ctypes.c_int, ctypes.c_int)
    mallopt.restype = ctypes.c_int
    return bool(mallopt(_M_MMAP_THRESHOLD, KEPT_BYTES)) and bool(
        mallopt(_M_TRIM_THRESHOLD, KEPT_BYTES)
    )
