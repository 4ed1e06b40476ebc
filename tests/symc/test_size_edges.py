"""Size-0 edges and size arithmetic (issue 18): `chunk` of an empty dim yields eager's number of
chunks, var/std/mean over an empty dim are NaN, `tile` of an empty tensor works, and a view's
inferred -1 stays an integer size (it used to reach the C++ printer as a Rational), and any/all
return bool also when nothing is reduced."""

from __future__ import annotations

import warnings

import sympy
import torch
import torch.nn.functional as F

from prims import infer_meta
from symbolic import LocalSource, ShapeEnv, SizeSource, TensorMeta
from tests.symc.eager_oracle import assert_matches_eager

SIZES = (4, 1, 2, 7, 11)


def test_chunk_of_an_empty_dim_gives_eagers_chunks():
    assert_matches_eager(lambda x: x.chunk(3), lambda n: [torch.randn(0, n)], SIZES)
    assert_matches_eager(lambda x: x.chunk(3, 1), lambda n: [torch.randn(n, 0)], SIZES)


def test_var_std_mean_over_an_empty_dim_are_nan():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for fn in (lambda x: x.var(-1), lambda x: x.var(-1, correction=0),
                   lambda x: torch.std_mean(x, -1), lambda x: x.mean(-1)):
            assert_matches_eager(fn, lambda n: [torch.randn(n, 0, requires_grad=True)], SIZES)


def test_tile_of_an_empty_tensor():
    assert_matches_eager(lambda x: x.tile(2, 3), lambda n: [torch.randn(0, n)], SIZES)
    assert_matches_eager(lambda x: x.tile(2), lambda n: [torch.randn(n, 0)], SIZES)


def test_tile_and_repeat_to_no_elements_differentiate():
    grad = {"requires_grad": True}
    assert_matches_eager(lambda x: x.repeat(2, 0), lambda n: [torch.randn(n, 4, **grad)], SIZES)
    assert_matches_eager(lambda x: x.tile((x.shape[0], 2)),
                         lambda n: [torch.randn(0, n, **grad)], SIZES)
    assert_matches_eager(lambda x: x.reshape(-1, 3) * 2,
                         lambda n: [torch.randn(0, 3, n, **grad)], SIZES)


def _pad_view(x):
    return F.pad(x, (0, (-x.shape[-1]) % 8)).view(x.shape[0], -1, 8)


def test_pad_to_a_multiple_then_view_compiles():
    assert_matches_eager(_pad_view, lambda n: [torch.randn(2, n, requires_grad=True)],
                         (3, 1, 2, 8, 13, 17))


def test_inferred_view_size_has_no_rational():
    env = ShapeEnv()
    s0 = env.create_symbol(2, SizeSource(LocalSource("x"), 0))
    s1 = env.create_symbol(3, SizeSource(LocalSource("x"), 1))
    x = TensorMeta.contiguous((s0, s1), torch.float32, "cpu")
    padded = infer_meta(F.pad, (x, (0, sympy.Mod(-s1, 8))), {}, env)
    out = infer_meta(torch.Tensor.view, (padded, s0, -1, 8), {}, env)
    rationals = [r for d in out.shape for r in sympy.sympify(d).atoms(sympy.Rational)
                 if not r.is_Integer]
    assert rationals == [], out


def test_any_all_of_a_zero_dim_tensor_are_bool():
    for fn in (lambda x: torch.all(x), lambda x: torch.any(x, 0, keepdim=True),
               lambda x: x.all(-1), lambda x: torch.any(x, dim=())):
        assert_matches_eager(fn, lambda n: [torch.tensor(float(n - 1))], (4, 1, 2),
                             backward=False)
    assert_matches_eager(lambda x: (x.to(torch.uint8)).all(-1),
                         lambda n: [torch.randn(3, n)], SIZES, backward=False)


def test_max_over_an_empty_dim_raises_like_eager():
    import pytest

    import symc

    for fn in (lambda x: x.max(-1), lambda x: x.argmin(1), lambda x: x.amin(), lambda x: x.max()):
        with pytest.raises((IndexError, RuntimeError)) as eager:
            fn(torch.randn(3, 0))
        for backend in ("eager", "prims", "aot_eager", "inductor"):
            compiled = symc.compile(fn, backend=backend)
            compiled(torch.randn(3, 4))
            with pytest.raises(eager.type):
                compiled(torch.randn(3, 0))
    assert_matches_eager(lambda x: x.amax(1), lambda n: [torch.randn(0, n)], SIZES,
                         backward=False)
