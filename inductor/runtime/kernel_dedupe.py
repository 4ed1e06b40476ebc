"""Identical kernels compiled once: a kernel's source after canonical renaming is its identity.

Twelve identical transformer layers lower to twelve groups whose kernels differ only in their
names (`k12_pw_node40_...`, `k57_pw_node301_...`) and the names of their arguments (`buf40_ptr`,
`buf301_ptr`). `canonical_text` renames the kernel and every argument by position, so those
kernels get one key; `KernelCache.get_or_build(key, build)` builds the first and hands the same
object to the rest (one module load, one set of Triton compiles, one warmup per process; in C++
one function in the library per graph).

    text = canonical_text(source, {"k12_pw_node40": "KERNEL"}, ("buf40_ptr", "s0"))
    kernel = TRITON_KERNELS.get_or_build((text, dtypes), lambda: TritonKernel(spec))

`STATS` counts groups seen and distinct kernels built (bench/profile_step.py reports them).
Arguments are passed by position, so a kernel shared between groups is launched with each
group's own tensors in the same order: sharing changes what is compiled, never what is computed.
"""

from __future__ import annotations

import re
import threading
from collections import Counter
from collections.abc import Callable, Iterable

STATS: Counter = Counter()  # "triton_groups", "triton_distinct", "cpp_groups", "cpp_distinct"


def canonical_text(source: str, names: dict[str, str], args: Iterable[str]) -> str:
    """`source` with each `names` key (a kernel name, also as the prefix of its body functions'
    names) replaced by its value, and each argument, whole words only, by `_a<position>`
    (arguments keep their order, which is the calling convention)."""
    for old, new in sorted(names.items(), key=lambda kv: -len(kv[0])):
        source = source.replace(old, new)
    mapping = {arg: f"_a{i}" for i, arg in reversed(list(enumerate(args)))}
    if not mapping:
        return source
    pattern = re.compile(r"\b(" + "|".join(re.escape(k) for k in
                                           sorted(mapping, key=len, reverse=True)) + r")\b")
    return pattern.sub(lambda m: mapping[m.group(1)], source)


class KernelCache:
    """key -> the one object built for it (process-wide; keys hold the whole source text)."""

    def __init__(self, kind: str):
        self.kind = kind
        self._built: dict = {}
        self._lock = threading.Lock()

    def get_or_build(self, key, build: Callable[[], object]) -> tuple[object, bool]:
        """(the object for `key`, whether it was built by this call)."""
        STATS[f"{self.kind}_groups"] += 1
        with self._lock:
            found = self._built.get(key)
            if found is not None:
                return found, False
            obj = self._built[key] = build()
            STATS[f"{self.kind}_distinct"] += 1
            return obj, True

    def clear(self) -> None:
        with self._lock:
            self._built.clear()

    def __len__(self) -> int:
        return len(self._built)


TRITON_KERNELS = KernelCache("triton")


def reset() -> None:
    """Forget every shared kernel and the counts (tests; symc.reset())."""
    TRITON_KERNELS.clear()
    STATS.clear()
