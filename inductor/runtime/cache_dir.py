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
    """The folder for artifacts of `kind` (`cpp`, `triton_src`), created if needed, writable."""
    path = Path(cache_root()) / kind
    if path not in _UNWRITABLE:
        try:
            path.mkdir(parents=True, exist_ok=True)  # again each time: `symc cache clear`
            if path not in _WRITABLE:
                with tempfile.NamedTemporaryFile(dir=path, prefix=".probe-"):
                    pass
                _WRITABLE.add(path)
            return path
        except OSError as error:
            _UNWRITABLE[path] = error
            warnings.warn(f"symc: the cache folder {path} is not writable ({error}); building "
                          f"into {_private_root() / kind} for this process only (set "
                          "SYMC_CACHE_DIR to a writable folder to keep compiled code between "
                          "runs)", RuntimeWarning, stacklevel=3)
    fallback = _private_root() / kind
    fallback.mkdir(parents=True, exist_ok=True)
    return fallback


_WRITABLE: set[Path] = set()
_UNWRITABLE: dict[Path, OSError] = {}


@functools.lru_cache(maxsize=1)
def _private_root() -> Path:
    root = Path(tempfile.mkdtemp(prefix="symc-cache-"))
    atexit.register(shutil.rmtree, root, ignore_errors=True)
    return root
