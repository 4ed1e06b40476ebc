"""A C launcher for compiled Triton kernels: one cuLaunchKernel per call, no Triton frame.

    launcher = c_launcher(binary, arg_names)     # None (and the reason logged) if it cannot
    launcher(grid0, stream, ptr0, ptr1, s0)      # pointers as ints, then the scalar values

The extension (c_launch.c) is compiled once per machine and Python build, cached on disk by the
hash of its source, the Python headers and the compiler (`<cache>/claunch/`), and reaches the
driver through `dlopen` (`$SYMC_LIBCUDA`, default libcuda.so.1: tests point it at a fake driver
that records launches). Triton's own launch does the same work after binding its arguments in
Python and C; here the binary's block size, shared memory and argument types are read once.

Where a launcher cannot be made (no compiler or Python headers, no libcuda, a kernel needing
scratch memory, clusters, cooperative or PDL launches, an argument type the table below does not
hold), `c_launcher` returns None and the kernel keeps Triton's launcher; the reason goes to the
`symc.kernels` logger at debug level and to `FALLBACKS`. SYMC_C_LAUNCH=0 turns it off.
"""

from __future__ import annotations

import functools
import hashlib
import importlib.util
import logging
import os
import subprocess
import sys
import sysconfig
import tempfile
from collections import Counter
from pathlib import Path

from inductor.runtime.cache_dir import cache_subdir

ENABLED = os.environ.get("SYMC_C_LAUNCH", "1") != "0"
SOURCE = Path(__file__).with_name("c_launch.c")
MODULE = "symc_claunch"
FALLBACKS: Counter = Counter()  # reason -> kernels that kept Triton's launcher
_LOG = logging.getLogger("symc.kernels")
# Triton signature types -> the extension's argument kinds (c_launch.c)
KINDS = {"i1": "i", "i8": "i", "i16": "i", "i32": "i", "u1": "I", "u8": "I", "u16": "I",
         "u32": "I", "i64": "l", "u64": "L", "fp32": "f", "fp64": "d"}
_STATE: dict = {}  # "module": the loaded extension, or "reason": why there is none


def libcuda_path() -> str:
    return os.environ.get("SYMC_LIBCUDA", "libcuda.so.1")


MAX_ARGS = 96  # c_launch.c's MAX_ARGS: a kernel with more arguments keeps Triton's launcher


def _fallback(reason: str, name: str = "") -> None:
    FALLBACKS[reason] += 1
    _LOG.debug("symc C launcher: %s keeps Triton's launcher: %s", name or "every kernel", reason)


@functools.lru_cache(maxsize=None)
def _compiler() -> str:
    cc = os.environ.get("CC", "cc")
    proc = subprocess.run([cc, "--version"], capture_output=True, text=True)
    if proc.returncode != 0:
        raise OSError(f"expected a C compiler at {cc!r} (set $CC), found exit {proc.returncode}")
    return cc + "\n" + proc.stdout.splitlines()[0]


def build() -> Path:
    """The extension's path, compiled here the first time (OSError when it cannot be)."""
    return build_extension(SOURCE, MODULE, "claunch", ("-ldl",))


def build_extension(source: Path, module_name: str, subdir: str, libs: tuple = ()) -> Path:
    """A Python C extension from one C file, compiled once per machine and Python build:
    cached under `<cache>/<subdir>/` by the hash of its source, the Python headers and the
    compiler (OSError when it cannot be built)."""
    include = sysconfig.get_paths()["include"]
    if not Path(include, "Python.h").exists():
        raise OSError(f"expected Python.h under {include}, found none")
    cc = _compiler()
    suffix = sysconfig.get_config_var("EXT_SUFFIX") or ".so"
    text = source.read_text()
    key = hashlib.sha256("\n".join([text, include, sys.version, cc, suffix]).encode())
    target = cache_subdir(subdir) / f"{module_name}_{key.hexdigest()[:24]}{suffix}"
    if target.exists():
        return target
    with tempfile.TemporaryDirectory(dir=target.parent) as tmp:
        out = Path(tmp) / target.name
        cmd = [cc.split("\n")[0], "-O2", "-shared", "-fPIC", f"-I{include}", str(source),
               "-o", str(out), *libs]
        proc = subprocess.run(cmd, capture_output=True, text=True)
        if proc.returncode != 0:
            raise OSError(f"expected the C extension {source.name} to compile, found:\n"
                          f"{proc.stderr[-2000:]}")
        os.replace(out, target)
    return target


def load_extension(path: Path, module_name: str):
    """Imports the extension built at `path` (ImportError when it cannot be loaded)."""
    spec = importlib.util.spec_from_file_location(module_name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def once(state: dict, enabled: bool, switch: str, what: str, make, errors: tuple):
    """The extension `make()` returns, made once and kept in `state["module"]`; None where
    it is off (`switch`=0) or `make` raises one of `errors` (`state["reason"]` says why)."""
    if "module" in state:
        return state["module"]
    mod = None
    if not enabled:
        state["reason"] = f"off ({switch}=0)"
    else:
        try:
            mod = make()
        except errors as e:
            mod = None
            state["reason"] = f"no {what}: {e}"
    state["module"] = mod
    return mod


def module():
    """The extension, its driver loaded; None (reason logged once) where it cannot be had."""
    if "module" in _STATE:
        return _STATE["module"]

    def make():
        mod = load_extension(build(), MODULE)
        mod.init(libcuda_path())
        return mod
    mod = once(_STATE, ENABLED, "SYMC_C_LAUNCH", "C launcher", make,
               (OSError, ImportError, RuntimeError))
    if mod is None:
        _fallback(_STATE["reason"])
    return mod


def reset(libcuda: str | None = None) -> None:
    """Forget the loaded extension (tests switching drivers: `libcuda` sets $SYMC_LIBCUDA)."""
    if libcuda is not None:
        os.environ["SYMC_LIBCUDA"] = libcuda
    _STATE.clear()


def argument_kinds(binary, arg_names) -> str | None:
    """The kinds string for a binary whose kernel takes `arg_names` (then constexprs only), or
    None when its signature is not that or holds a type the launcher has no kind for."""
    src = getattr(binary, "src", None)
    signature = getattr(src, "signature", None)
    if not isinstance(signature, dict):
        return None
    items = list(signature.items())
    runtime = [(k, t) for k, t in items if t != "constexpr"]
    if [k for k, _ in runtime] != list(arg_names) or items[:len(runtime)] != runtime:
        return None
    kinds = []
    for _, t in runtime:
        kind = "p" if isinstance(t, str) and t.startswith("*") else KINDS.get(t)
        if kind is None:
            return None
        kinds.append(kind)
    return "".join(kinds)


def unsupported(binary) -> str | None:
    """Why Triton's launcher must launch `binary` (a launch feature the C one lacks), or None."""
    run, meta = getattr(binary, "run", None), getattr(binary, "metadata", None)
    if meta is None or run is None:
        return "no metadata"
    for attr in ("global_scratch_size", "profile_scratch_size"):
        if getattr(run, attr, getattr(meta, attr, 1)):
            return f"{attr} > 0"
    if getattr(run, "gsan_enabled", False):
        return "gsan"
    if getattr(meta, "num_ctas", 1) != 1:
        return "num_ctas != 1"
    if getattr(run, "launch_cooperative_grid", getattr(meta, "launch_cooperative_grid", False)):
        return "cooperative launch"
    if getattr(run, "launch_pdl", getattr(meta, "launch_pdl", False)):
        return "PDL launch"
    if getattr(meta, "shared", 0) > 228 * 1024:
        return "oversized shared memory"
    if not isinstance(getattr(binary, "function", None), int):
        return "no CUfunction handle"
    return None


def c_launcher(binary, arg_names, device: int = 0):
    """The C launcher of `binary` (see the module docstring), or None."""
    name = getattr(getattr(binary, "metadata", None), "name", "?")
    why = unsupported(binary)
    kinds = None if why else argument_kinds(binary, arg_names)
    if why is None and kinds is None:
        why = "signature is not the kernel's arguments in order, or holds an unknown type"
    if why is None and len(kinds) >= MAX_ARGS:
        why = f"{len(kinds)} arguments (the C launcher takes at most {MAX_ARGS - 1})"
    if why is not None:
        _fallback(why, name)
        return None
    mod = module()
    if mod is None:
        return None
    meta = binary.metadata
    return mod.make(binary.function, 32 * int(meta.num_warps), int(meta.shared), kinds,
                    int(device), str(name))
