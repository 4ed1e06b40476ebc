"""The on-disk cache's folders: `$SYMC_CACHE_DIR/<kind>` (default `~/.cache/symc/<kind>`).

    cache_subdir("cpp")   ->  Path('/root/.cache/symc/cpp'), created if needed

A cache folder that cannot be created or written (a read-only home, a path through a file) is
not an error: symc warns once and builds into a private temporary folder for this process
(removed at exit), so nothing is shared with other processes, and compiled code still loads
(ctypes and Triton need real files).
"""

from __future__ import annotations

import atexit
import functools
import os
import shutil
import tempfile
import warnings
from pathlib import Path


def cache_root() -> str:
    return os.environ.get("SYMC_CACHE_DIR") or os.path.join(os.path.expanduser("~"), ".cache",
                                                            "symc")


def cache_subdir(kind: str) -> Path:
    """The folder for artifacts of `kind` (`cpp`, `triton_src`), writable."""
    return _usable(cache_root(), kind)


@functools.lru_cache(maxsize=None)
def _usable(root: str, kind: str) -> Path:
    path = Path(root) / kind
    try:
        path.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=path, prefix=".probe-"):
            pass
        return path
    except OSError as error:
        fallback = _private_root() / kind
        fallback.mkdir(parents=True, exist_ok=True)
        warnings.warn(f"symc: the cache folder {path} is not writable ({error}); building into "
                      f"{fallback} for this process only (set SYMC_CACHE_DIR to a writable "
                      "folder to keep compiled code between runs)", RuntimeWarning, stacklevel=4)
        return fallback


@functools.lru_cache(maxsize=1)
def _private_root() -> Path:
    root = Path(tempfile.mkdtemp(prefix="symc-cache-"))
    atexit.register(shutil.rmtree, root, ignore_errors=True)
    return root
