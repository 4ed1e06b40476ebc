"""Compile one C++ source into a shared library, cached on disk by content; load with ctypes.

    lib = load_library(source)          # one compiler call per new source, then a disk hit
    fn = kernel_function(lib, "k0_pw_node1", n_pointers=2, n_ints=1)

Cache: `$SYMC_CACHE_DIR` or `~/.cache/symc`, under `cpp/<key>.so`, where the key hashes the
source, the compiler flags, the compiler's version and what `-march=native` means on this host
(the target options gcc resolves it to: a cache shared between machines never serves code built
for another instruction set). Kernels are built with `-O3 -march=native`; the prelude
(cpp_prelude.h) and its vectorizable math (cpp_math.h) precede every source. Writes go to a temporary file renamed
into place (concurrent builds are safe); an entry whose bytes do not match the digest stored
beside it (`<key>.sha256`), or that fails to load, is rebuilt.
"""

from __future__ import annotations

import ctypes
import functools
import hashlib
import os
import subprocess
import tempfile
from pathlib import Path

from inductor.ir import LoweringError
from inductor.runtime.cache_dir import cache_subdir

CXX = os.environ.get("CXX", "g++")
# -fno-math-errno and -fno-trapping-math (no value changes: errno and FP traps are unused) let
# gcc if-convert and vectorize the math's selects and std::sqrt.
CXX_FLAGS = ("-O3", "-march=native", "-fopenmp", "-shared", "-fPIC", "-std=c++17",
             "-fno-math-errno", "-fno-trapping-math", "-w")
PRELUDE = Path(__file__).with_name("cpp_prelude.h")
MATH = Path(__file__).with_name("cpp_math.h")
STATS = {"compiled": 0, "disk_hits": 0, "memory_hits": 0}
_LOADED: dict[str, ctypes.CDLL] = {}


def cache_dir() -> Path:
    return cache_subdir("cpp")


@functools.lru_cache(maxsize=None)
def compiler_version() -> str:
    try:
        return subprocess.run([CXX, "--version"], capture_output=True, text=True,
                              check=True).stdout.splitlines()[0]
    except (OSError, subprocess.CalledProcessError) as e:
        raise LoweringError(f"expected a C++ compiler at {CXX!r} (set $CXX), found: {e}") from e


@functools.lru_cache(maxsize=None)
def native_target() -> str:
    """What -march=native selects here (gcc's resolved target options), else /proc/cpuinfo's
    flags: part of the cache key."""
    proc = subprocess.run([CXX, "-march=native", "-Q", "--help=target"], capture_output=True,
                          text=True)
    if proc.returncode == 0 and proc.stdout.strip():
        return proc.stdout
    try:
        lines = Path("/proc/cpuinfo").read_text().splitlines()
    except OSError:
        return "unknown"
    return next((line for line in lines if line.startswith("flags")), "unknown")


@functools.lru_cache(maxsize=None)
def _headers() -> str:
    return f"{PRELUDE.read_text()}\n{MATH.read_text()}"


def full_source(source: str) -> str:
    return f"{_headers()}\n{source}\n"


def source_key(source: str) -> str:
    text = "\n".join([full_source(source), " ".join(CXX_FLAGS), compiler_version(),
                      native_target()])
    return hashlib.sha256(text.encode()).hexdigest()[:32]


def _compile(source: str, target: Path) -> None:
    with tempfile.TemporaryDirectory(dir=target.parent) as tmp:
        src = Path(tmp) / "kernels.cpp"
        src.write_text(full_source(source))
        out = Path(tmp) / "kernels.so"
        cmd = [CXX, *CXX_FLAGS, str(src), "-o", str(out)]
        proc = subprocess.run(cmd, capture_output=True, text=True)
        if proc.returncode != 0:
            raise LoweringError(f"expected the generated C++ to compile, found errors:\n"
                                f"{proc.stderr[-4000:]}\n--- source ---\n{source[:4000]}")
        digest = Path(tmp) / "kernels.sha256"
        digest.write_text(_digest(out))
        os.replace(out, target)
        os.replace(digest, target.with_suffix(".sha256"))
    STATS["compiled"] += 1


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _is_intact(target: Path) -> bool:
    """The entry exists and matches the digest written when it was built."""
    check = target.with_suffix(".sha256")
    try:
        return check.read_text() == _digest(target)
    except OSError:
        return False


def load_library(source: str, required: tuple = ()) -> ctypes.CDLL:
    """The library for `source`; `required` function names must resolve (else rebuild)."""
    key = source_key(source)
    lib = _LOADED.get(key)
    if lib is not None:
        STATS["memory_hits"] += 1
        return lib
    target = cache_dir() / f"{key}.so"
    if _is_intact(target):
        try:
            lib = ctypes.CDLL(str(target))
            for name in required:
                getattr(lib, name)
            STATS["disk_hits"] += 1
        except (OSError, AttributeError):
            lib = None
            target.unlink(missing_ok=True)  # corrupt: rebuild below
    if lib is None:
        _compile(source, target)
        lib = ctypes.CDLL(str(target))
    _LOADED[key] = lib
    return lib


def kernel_function(lib: ctypes.CDLL, name: str, n_pointers: int, n_ints: int):
    fn = getattr(lib, name)
    fn.argtypes = [ctypes.c_void_p] * n_pointers + [ctypes.c_int64] * n_ints
    fn.restype = None
    return fn
