"""symc-compiled models train under torch.distributed on CPU (gloo, 2 processes): DDP and FSDP2.

Each rank draws its own batch size and sequence length every step (never the same as the other
rank's). The compiled runs must give eager DDP's per-rank losses, keep the ranks' weights
identical (gradients were all-reduced through DDP's hooks on the parameters), and compile once
per rank with no recompiles. The two workers are spawned once for the whole module; each runs
every configuration in turn and sends its results back through a queue.
"""

from __future__ import annotations

import hashlib
import os
import queue
import socket
import time
import traceback
from datetime import timedelta

import pytest
import torch
import torch.multiprocessing as mp

WORLD = 2
STEPS = 10
# (batch, length) per step for each rank; the ranks never agree on a length at the same step.
SHAPES = {
    0: [(2, 5), (2, 9), (2, 13), (2, 7), (2, 16), (2, 3), (2, 11), (2, 20), (2, 8), (2, 14)],
    1: [(3, 12), (3, 4), (3, 17), (3, 10), (3, 6), (3, 19), (3, 2), (3, 9), (3, 15), (3, 5)],
}
# name -> (wrapping, symc backend or None)
CONFIGS = {
    "eager_ddp": ("ddp", None),
    "symc_ddp_aot_eager": ("ddp", "aot_eager"),
    "symc_ddp_inductor": ("ddp", "inductor"),
    "symc_outer_ddp_aot_eager": ("outer_ddp", "aot_eager"),
    "symc_fsdp2_aot_eager": ("fsdp2", "aot_eager"),
}
DEADLINE_S = 240


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _weights_digest(model) -> str:
    """Hash of every parameter's full value (FSDP2 shards are gathered first)."""
    digest = hashlib.sha256()
    for _, p in sorted(model.named_parameters()):
        full = p.full_tensor() if hasattr(p, "full_tensor") else p
        digest.update(full.detach().cpu().contiguous().numpy().tobytes())
    return digest.hexdigest()


def _train(rank: int, wrapping: str, backend: str | None) -> dict:
    import symc
    from tests.models.models import build, make_batch

    model = build("gpt", seed=0, dropout=0.0)
    compiled = None
    if wrapping == "ddp":
        if backend is not None:  # the recommended pattern: compile the inner module in place
            compiled = symc.compile(model, backend=backend).install()
        step = torch.nn.parallel.DistributedDataParallel(model)
    elif wrapping == "outer_ddp":  # compiling the DDP wrapper: a break at DDP.forward
        compiled = step = symc.compile(torch.nn.parallel.DistributedDataParallel(model),
                                       backend=backend)
    elif wrapping == "fsdp2":
        from torch.distributed.device_mesh import init_device_mesh
        from torch.distributed.fsdp import fully_shard

        fully_shard(model, mesh=init_device_mesh("cpu", (WORLD,)))
        compiled = symc.compile(model, backend=backend).install()
        step = model
    else:
        raise ValueError(wrapping)
    opt = torch.optim.AdamW(model.parameters(), lr=3e-3, weight_decay=0.1)
    losses = []
    for i, (batch, seqlen) in enumerate(SHAPES[rank]):
        inputs = make_batch("gpt", batch=batch, seqlen=seqlen, seed=1000 * rank + i)
        opt.zero_grad(set_to_none=True)
        _, loss = step(**inputs)
        loss.backward()
        opt.step()
        losses.append(float(loss.detach()))
    out = {"losses": losses, "weights": _weights_digest(model)}
    if compiled is not None:
        report = symc.explain(compiled)
        out.update(compiles=report.compiles, recompiles=report.recompiles,
                   graph_breaks=report.graph_breaks, report=str(report)[:2000])
        if wrapping == "ddp":  # explain also finds the compiled forward through the DDP wrapper
            out["compiles_via_wrapper"] = symc.explain(step).compiles
    return out


def _worker(rank: int, port: int, results) -> None:
    import torch.distributed as dist

    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
    torch.set_num_threads(1)
    dist.init_process_group("gloo", rank=rank, world_size=WORLD, timeout=timedelta(seconds=90))
    try:
        for name, (wrapping, backend) in CONFIGS.items():
            start = time.perf_counter()
            try:
                out = _train(rank, wrapping, backend)
            except Exception:  # noqa: BLE001 - reported to the parent, which fails the test
                out = {"error": traceback.format_exc()[-4000:]}
            out["seconds"] = time.perf_counter() - start
            results.put((rank, name, out))
            dist.barrier()
    finally:
        dist.destroy_process_group()
        results.put((rank, "done", {}))


@pytest.fixture(scope="module")
def runs() -> dict:
    """{config name: {rank: result}} from one spawned group of WORLD gloo workers."""
    ctx = mp.get_context("spawn")
    results = ctx.Queue()
    port = _free_port()
    saved = os.environ.get("OMP_NUM_THREADS")
    os.environ["OMP_NUM_THREADS"] = "1"  # two ranks share this machine's cores
    try:
        procs = [ctx.Process(target=_worker, args=(rank, port, results)) for rank in range(WORLD)]
        for proc in procs:
            proc.start()
    finally:
        if saved is None:
            os.environ.pop("OMP_NUM_THREADS")
        else:
            os.environ["OMP_NUM_THREADS"] = saved
    out: dict = {name: {} for name in CONFIGS}
    done = 0
    deadline = time.monotonic() + DEADLINE_S
    try:
        while done < WORLD and time.monotonic() < deadline:
            try:
                rank, name, result = results.get(timeout=1.0)
            except queue.Empty:
                if any(p.exitcode not in (None, 0) for p in procs):
                    break
                continue
            if name == "done":
                done += 1
            else:
                out[name][rank] = result
    finally:
        for proc in procs:
            proc.join(timeout=10)
            if proc.is_alive():
                proc.terminate()
                proc.join()
    exits = [p.exitcode for p in procs]
    assert done == WORLD and exits == [0] * WORLD, f"workers did not finish: exit codes {exits}"
    return out


def _ranks(runs: dict, name: str) -> dict:
    ranks = runs[name]
    assert sorted(ranks) == list(range(WORLD)), f"{name}: results from ranks {sorted(ranks)}"
    for rank, result in ranks.items():
        assert "error" not in result, f"{name} rank {rank} failed:\n{result['error']}"
    return ranks


def test_eager_ddp_reference_keeps_ranks_in_sync(runs):
    ranks = _ranks(runs, "eager_ddp")
    assert ranks[0]["weights"] == ranks[1]["weights"]
    assert ranks[0]["losses"] != ranks[1]["losses"]  # each rank trained on its own data


@pytest.mark.parametrize("name", [n for n in CONFIGS if n != "eager_ddp"])
def test_compiled_training_under_distributed_matches_eager_ddp(runs, name):
    reference = _ranks(runs, "eager_ddp")
    ranks = _ranks(runs, name)
    for rank in range(WORLD):
        torch.testing.assert_close(torch.tensor(ranks[rank]["losses"]),
                                   torch.tensor(reference[rank]["losses"]), atol=1e-4, rtol=1e-4,
                                   msg=lambda m, rank=rank: f"{name} rank {rank} losses: {m}")
    # Bitwise-equal weights on both ranks: every gradient went through the all-reduce.
    assert ranks[0]["weights"] == ranks[1]["weights"], f"{name}: ranks' weights diverged"


@pytest.mark.parametrize("name", [n for n in CONFIGS if n != "eager_ddp"])
def test_each_rank_compiles_once_for_all_its_lengths(runs, name):
    expected_breaks = 1 if name.startswith("symc_outer") else 0  # the break at DDP.forward
    for rank, result in _ranks(runs, name).items():
        counts = (result["compiles"], result["recompiles"], result["graph_breaks"])
        assert counts == (1, 0, expected_breaks), f"{name} rank {rank}:\n{result['report']}"
        if "compiles_via_wrapper" in result:
            assert result["compiles_via_wrapper"] == 1
