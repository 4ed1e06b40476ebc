"""philox_hash / philox_rand: fixed golden values (what C++ and Triton must reproduce), range,
rough uniformity, and the seed hooks decompositions use."""

from __future__ import annotations

import torch

from prims import MetaTracer, next_offset, next_seed, ops, philox_hash, tracing
from prims.random import uniform_from_hash
from symbolic import ShapeEnv, TensorMeta

GOLDEN = [
    # (seed, counters, hashes) - changing the formula breaks every backend's bit-exactness
    (0, [0, 1, 2, 3], [2642978468, 1178792589, 3458711525, 2748170579]),
    (12345, [0, 1, 2**32 + 5], [3538339443, 519544622, 1170550518]),
    (-1, [7], [885102688]),
]


def test_philox_hash_matches_golden_values():
    for seed, counters, expected in GOLDEN:
        got = philox_hash(torch.tensor(seed), torch.tensor(counters))
        assert got.tolist() == expected, f"seed {seed}: {got.tolist()} != {expected}"


def test_philox_rand_is_in_unit_interval_and_roughly_uniform():
    u = ops.philox_rand(torch.tensor(3), 0, (200, 50), torch.float32, "cpu")
    assert u.min() >= 0 and u.max() < 1
    assert abs(u.mean().item() - 0.5) < 0.01
    counts = torch.histc(u, bins=10, min=0, max=1)
    assert counts.min() > 900 and counts.max() < 1100, counts


def test_low_precision_never_rounds_up_to_one():
    top = torch.tensor([0xFFFFFFFF], dtype=torch.int64)
    for dtype in (torch.float16, torch.bfloat16, torch.float32, torch.float64):
        assert uniform_from_hash(top, dtype).item() < 1.0, dtype


def test_offset_shifts_the_counter():
    seed = torch.tensor(11)
    whole = ops.philox_rand(seed, 0, (10,), torch.float32, "cpu")
    tail = ops.philox_rand(seed, 4, (6,), torch.float32, "cpu")
    assert torch.equal(whole[4:], tail)


def test_seed_hooks_in_real_and_meta_mode():
    seed = next_seed()
    assert isinstance(seed, torch.Tensor) and seed.dtype == torch.int64 and seed.ndim == 0
    assert next_offset(10) == 0
    tracer = MetaTracer(ShapeEnv())
    with tracing(tracer):
        meta_seed = next_seed()
        assert isinstance(meta_seed, TensorMeta) and meta_seed.shape == ()
        assert next_offset(10) == 0 and next_offset(5) == 10 and next_offset(1) == 15
