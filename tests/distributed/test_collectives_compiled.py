"""Distributed values in compiled code, two gloo ranks on the CPU (issue 26, class 11):
DTensor and AsyncCollectiveTensor inputs run eagerly (an inductor graph reading them crashed
both ranks with SIGSEGV), and `dist.get_rank()`/`get_world_size()` are constants of the
default process group: one compile, not a recompile on every call."""

from __future__ import annotations

import os
import queue
import socket
import traceback

import pytest
import torch
import torch.multiprocessing as mp

WORLD = 2
BACKENDS = ("eager", "aot_eager", "inductor")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _rank_query(backend):
    import torch.distributed as dist

    import symc

    def f(x):
        return x * dist.get_rank() + dist.get_world_size()

    compiled = symc.compile(f, backend=backend)
    ok = all(torch.equal(compiled(x), f(x))
             for x in (torch.randn(n) for n in (3, 2, 7, 11, 5)))
    report = symc.explain(compiled)
    return {"ok": ok, "compiles": report.compiles, "breaks": report.graph_breaks}


def _dtensor(backend):
    from torch.distributed.device_mesh import init_device_mesh
    from torch.distributed.tensor import Shard, distribute_tensor

    import symc

    mesh = init_device_mesh("cpu", (WORLD,))
    torch.manual_seed(0)
    w = distribute_tensor(torch.randn(4, 4), mesh, [Shard(0)])
    x = distribute_tensor(torch.randn(6, 4), mesh, [Shard(0)])

    def f(x, w):
        return (x @ w).relu().sum()

    compiled = symc.compile(f, backend=backend)
    got, want = compiled(x, w).full_tensor(), f(x, w).full_tensor()
    return {"ok": torch.allclose(got, want), "breaks": symc.explain(compiled).graph_breaks}


def _functional_all_reduce(backend):
    import torch.distributed as dist
    import torch.distributed._functional_collectives as funcol

    import symc

    def f(x):
        y = funcol.all_reduce(x * 2, "sum", dist.group.WORLD)
        return (y + 1).sin()

    compiled = symc.compile(f, backend=backend)
    x = torch.arange(5.0) + dist.get_rank()
    return {"ok": torch.allclose(compiled(x), f(x))}


CASES = {"rank_query": _rank_query, "dtensor": _dtensor, "all_reduce": _functional_all_reduce}


def _worker(rank: int, port: int, results) -> None:
    import torch.distributed as dist

    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
    dist.init_process_group("gloo", rank=rank, world_size=WORLD)
    try:
        for name, case in CASES.items():
            for backend in BACKENDS:
                try:
                    result = case(backend)
                except Exception:  # noqa: BLE001 - reported to the test process
                    result = {"error": traceback.format_exc()}
                results.put((rank, (name, backend), result))
    finally:
        dist.destroy_process_group()
        results.put((rank, "done", {}))


@pytest.fixture(scope="module")
def runs() -> dict:
    ctx = mp.get_context("spawn")
    results = ctx.Queue()
    port = _free_port()
    saved = os.environ.get("OMP_NUM_THREADS")
    os.environ["OMP_NUM_THREADS"] = "1"
    try:
        procs = [ctx.Process(target=_worker, args=(r, port, results)) for r in range(WORLD)]
        for proc in procs:
            proc.start()
    finally:
        if saved is None:
            os.environ.pop("OMP_NUM_THREADS")
        else:
            os.environ["OMP_NUM_THREADS"] = saved
    out: dict = {}
    done = 0
    try:
        while done < WORLD:
            try:
                rank, key, result = results.get(timeout=1.0)
            except queue.Empty:
                if any(p.exitcode not in (None, 0) for p in procs):
                    break
                continue
            if key == "done":
                done += 1
            else:
                out.setdefault(key, {})[rank] = result
    finally:
        for proc in procs:
            proc.join(timeout=30)
            if proc.is_alive():
                proc.terminate()
                proc.join()
    exits = [p.exitcode for p in procs]
    assert done == WORLD and exits == [0] * WORLD, f"workers died: exit codes {exits}"
    return out


def _results(runs, name, backend):
    ranks = runs.get((name, backend), {})
    assert sorted(ranks) == list(range(WORLD)), f"{name}/{backend}: ranks {sorted(ranks)}"
    for rank, result in ranks.items():
        assert "error" not in result, f"{name}/{backend} rank {rank}:\n{result['error']}"
        assert result["ok"], f"{name}/{backend} rank {rank}: differs from eager: {result}"
    return ranks


@pytest.mark.slow
@pytest.mark.parametrize("backend", BACKENDS)
def test_rank_queries_compile_once(runs, backend):
    for result in _results(runs, "rank_query", backend).values():
        assert result["compiles"] == 1 and result["breaks"] == 0, result


@pytest.mark.slow
@pytest.mark.parametrize("backend", BACKENDS)
def test_dtensor_inputs_run_eagerly(runs, backend):
    for result in _results(runs, "dtensor", backend).values():
        assert result["breaks"] >= 1, result


@pytest.mark.slow
@pytest.mark.parametrize("backend", BACKENDS)
def test_functional_all_reduce_result_runs_eagerly(runs, backend):
    _results(runs, "all_reduce", backend)
