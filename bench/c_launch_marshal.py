"""The C launcher's own cost against a ctypes call of the same launch, on a CPU, with the fake
driver of tests/inductor/test_c_launch.py (its cuLaunchKernel records and returns: what is
timed is the call from Python and the argument marshalling, not a driver).

    python bench/c_launch_marshal.py [--reps 20000] [--out bench/results]

Interleaved rounds, the minimum of each (a shared machine only ever adds time): the extension
(`launcher(grid, stream, p0, p1, n)`, a vectorcall), a ctypes function of fixed argtypes doing
the same cuLaunchKernel, and an empty Python function of the same arity (the floor of any call).
"""

from __future__ import annotations

import argparse
import ctypes
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.common import environment, write_json  # noqa: E402

CTYPES_LAUNCH = r"""
#include <dlfcn.h>
#include <stdint.h>
typedef int (*launch_fn)(void *, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                         unsigned, void *, void **, void **);
static launch_fn cu;
int init(const char *path) { void *h = dlopen(path, RTLD_NOW); if (!h) return 1;
  cu = (launch_fn)dlsym(h, "cuLaunchKernel"); return cu == 0; }
int launch3(uint64_t fn, unsigned grid, unsigned block, unsigned shared, uint64_t stream,
            uint64_t a0, uint64_t a1, int32_t a2) {
  uint64_t z0 = 0, z1 = 0;
  void *params[] = {&a0, &a1, &a2, &z0, &z1};
  return cu((void *)fn, grid, 1, 1, block, 1, 1, shared, (void *)stream, params, 0);
}
"""


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--reps", type=int, default=20000)
    p.add_argument("--rounds", type=int, default=15)
    p.add_argument("--out", default=str(Path(__file__).parent / "results"))
    args = p.parse_args()
    from tests.inductor.test_c_launch import FAKE_DRIVER

    from inductor.runtime import c_launch

    tmp = Path(tempfile.mkdtemp())
    (tmp / "fake.c").write_text(FAKE_DRIVER)
    (tmp / "ct.c").write_text(CTYPES_LAUNCH)
    for src, out in (("fake.c", "libcuda_fake.so"), ("ct.c", "ct.so")):
        subprocess.run(["cc", "-O2", "-shared", "-fPIC", str(tmp / src), "-o", str(tmp / out),
                        "-ldl"], check=True)
    c_launch.reset(str(tmp / "libcuda_fake.so"))
    launcher = c_launch.module().make(7, 128, 0, "ppi", 0, "bench")
    ct = ctypes.CDLL(str(tmp / "ct.so"))
    assert ct.init(str(tmp / "libcuda_fake.so").encode()) == 0
    f = ct.launch3
    f.argtypes = [ctypes.c_uint64, ctypes.c_uint, ctypes.c_uint, ctypes.c_uint, ctypes.c_uint64,
                  ctypes.c_uint64, ctypes.c_uint64, ctypes.c_int32]
    f.restype = ctypes.c_int
    p0, p1, stream = 0x7F0012340000, 0x7F0012350000, 0x5555

    def empty(g, s, a, b, n):
        return None

    cases = {
        "extension": lambda: launcher(3, stream, p0, p1, 37),
        "ctypes": lambda: f(7, 3, 128, 0, stream, p0, p1, 37),
        "python_call_floor": lambda: empty(3, stream, p0, p1, 37),
    }
    best = {k: float("inf") for k in cases}
    for _ in range(args.rounds):
        for name, fn in cases.items():  # interleaved: noise spreads over all of them
            start = time.perf_counter()
            for _ in range(args.reps):
                fn()
            best[name] = min(best[name], (time.perf_counter() - start) / args.reps * 1e6)
    for name, us in best.items():
        print(f"{name:>20}: {us:.3f} us per call (min of {args.rounds} rounds)")
    c_launch.reset()
    write_json(Path(args.out) / "c_launch_marshal_cpu.json",
               {"benchmark": "c_launch_marshal", "environment": environment(),
                "reps": args.reps, "rounds": args.rounds, "us_per_call": best})
    return 0


if __name__ == "__main__":
    sys.exit(main())
