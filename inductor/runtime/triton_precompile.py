"""Compile a graph's Triton variants in parallel worker processes, ahead of the first launch.

Each variant is one Triton compile (~0.1-0.3 s); a GPT training graph has hundreds. Compiled one
by one at first launch, they dominate the wait before the first step. Here `compile_graph`
submits every variant of every kernel to a pool of spawned processes as soon as the kernels are
generated; a worker loads the same kernel module, jits it with the same options and calls
`warmup`, which writes the binary to Triton's on-disk cache. At its first launch a kernel waits
for its own jobs, then its in-process warmup finds every binary on disk.

    jobs = submit(kernel, pointer_dtypes)     # futures; kernel._pending holds them
    SYMC_TRITON_COMPILE_WORKERS=0             # off: compile in process, one by one

A failing job is not an error: the in-process warmup compiles that variant itself.
"""

from __future__ import annotations

import atexit
import multiprocessing
import multiprocessing.util
import os
from concurrent.futures import Future, ProcessPoolExecutor

import torch

from inductor.runtime.triton_launch import jit_variant, load_module, mock_arguments

_POOL: list = []


def workers() -> int:
    value = os.environ.get("SYMC_TRITON_COMPILE_WORKERS")
    if value is not None:
        return int(value)
    return max(0, min(32, (os.cpu_count() or 1)))


def _pool() -> ProcessPoolExecutor | None:
    if not _POOL:
        n = workers()
        if n <= 1:
            _POOL.append(None)
        else:
            pool = ProcessPoolExecutor(n, mp_context=multiprocessing.get_context("spawn"))
            atexit.register(pool.shutdown, wait=False, cancel_futures=True)
            # multiprocessing children skip atexit but run these finalizers: without it a
            # spawned training rank would wait forever on idle workers when it exits
            multiprocessing.util.Finalize(pool, pool.shutdown, exitpriority=10,
                                          kwargs={"wait": False, "cancel_futures": True})
            _POOL.append(pool)
    return _POOL[0]


def _compile_variant(job: dict) -> bool:
    """In a worker: jit one (body, level) of a kernel and warm it up (fills the disk cache)."""
    module = load_module(job["name"], job["source"])
    fn = jit_variant(module, job["name"], job["body"], job["level"], job["pointer_args"],
                     job["int_args"], job["align_args"])
    mock = mock_arguments(job["args"], job["values"], job["level"], job["align_args"])
    fn.warmup(*mock, grid=(1,), num_warps=job["num_warps"], **job["constexprs"])
    return True


def submit(kernel, pointer_dtypes: dict[str, torch.dtype]) -> list[Future]:
    """Queue every variant of `kernel` (a TritonKernel); returns the futures ([] when off)."""
    pool = _pool()
    spec = kernel.spec
    if pool is None or spec.float_args or not kernel.precompile:
        return []
    if any(name not in pointer_dtypes for name in spec.pointer_args):
        return []
    values = [pointer_dtypes.get(name) for name in spec.args]
    futures = []
    for cfg, level in kernel.all_variants():
        job = {"name": spec.name, "source": spec.source, "body": cfg.body, "level": level,
               "pointer_args": spec.pointer_args, "int_args": spec.int_args,
               "align_args": spec.align_args, "args": spec.args, "values": values,
               "num_warps": cfg.num_warps, "constexprs": cfg.constexprs()}
        try:
            futures.append(pool.submit(_compile_variant, job))
        except RuntimeError:  # pool shut down (interpreter exit)
            return futures
    return futures
