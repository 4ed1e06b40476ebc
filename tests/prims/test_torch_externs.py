"""Torch externs (prims/torch_externs.py, the table prims/decompositions/extern_ops.py): ops
called at run time compile with no graph break, match torch forward and backward on every
backend, and stay size-generic (one compile over sizes 1, 2, odd, prime, above the hint).
"""

from __future__ import annotations

import pytest
import sympy
import torch

import symc
from prims import MetaTracer, PrimError, ops, tracing
from prims.torch_externs import EXTERN_OPS, ExternOp
from symbolic import ShapeEnv, TensorMeta
from tests.device import interpret_triton, use_triton
from tests.prims.samples import symbolic_size

interpret_triton()

BACKENDS = ("eager", "aot_eager", "inductor")
SIZES = (5, 1, 2, 7, 13)  # the first is the hint; 13 is above it


def _spd(n, seed):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(n, n, generator=g, dtype=torch.float64)
    return (x @ x.T + n * torch.eye(n, dtype=torch.float64)).float()


def _positive(n, seed):
    return torch.rand(n, 3, generator=torch.Generator().manual_seed(seed)) + 0.5


def _matrix(n, seed):
    return torch.randn(n, 4, generator=torch.Generator().manual_seed(seed))


def cholesky_and_inverse(a):
    return torch.linalg.cholesky(a) * 2, torch.linalg.inv(a).sum(0)


def svd_reduced(a):
    u, s, vh = torch.linalg.svd(a, full_matrices=False)
    return (u * s.unsqueeze(-2)) @ vh, s  # sign-independent products and singular values


def special_pointwise(x):
    return torch.digamma(x) + torch.lgamma(x) * torch.special.i1e(x), torch.erfinv(x / 4)


def real_fft(x):
    return torch.fft.irfft(x, dim=0), torch.fft.fftshift(x, dim=0)


def solve_and_det(a):
    b = a[:, :2].contiguous()
    return torch.linalg.solve(a, b), torch.linalg.det(a)


def pairs_and_quantiles(x):
    q = torch.tensor([0.25, 0.5], dtype=x.dtype)
    return torch.combinations(x[:, 0]) * 3, torch.quantile(x, q, dim=0)


# (function, inputs for size n)
CASES = [
    (cholesky_and_inverse, lambda n: (_spd(n, n),)),
    (svd_reduced, lambda n: (_matrix(n + 1, n),)),
    (special_pointwise, lambda n: (_positive(n, n),)),
    (real_fft, lambda n: (_positive(n + 1, n),)),
    (solve_and_det, lambda n: (_spd(n + 1, n),)),
    (pairs_and_quantiles, lambda n: (_matrix(n, n),)),
]


def _forward_backward(fn, inputs, seed):
    leaves = [t.detach().clone().requires_grad_(True) for t in inputs]
    outs = fn(*leaves)
    gen = torch.Generator().manual_seed(seed)
    loss = sum((o * torch.randn(o.shape, generator=gen)).sum() for o in outs)
    return [o.detach() for o in outs], torch.autograd.grad(loss, leaves)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("fn, make", CASES, ids=[c[0].__name__ for c in CASES])
def test_extern_matches_torch_forward_and_backward_with_one_compile(fn, make, backend):
    compiled = symc.compile(fn, backend=backend)
    for n in SIZES:
        inputs = make(n)
        want, want_grads = _forward_backward(fn, inputs, n)
        got, got_grads = _forward_backward(compiled, inputs, n)
        for g, w in zip([*got, *got_grads], [*want, *want_grads], strict=True):
            assert g.shape == w.shape and g.dtype == w.dtype, (n, g.shape, w.shape)
            torch.testing.assert_close(g, w, rtol=1e-4, atol=1e-4, msg=f"size {n}")
    report = symc.explain(compiled)
    assert (report.compiles, report.graph_breaks) == (1, 0), str(report)


def test_extern_runs_beside_triton_kernels(monkeypatch):
    use_triton(monkeypatch)
    test_extern_matches_torch_forward_and_backward_with_one_compile(
        solve_and_det, CASES[4][1], "inductor")


def test_non_differentiable_extern_output_does_not_require_grad():
    x = torch.rand(6, requires_grad=True)
    out = symc.compile(lambda x: torch.special.bessel_j0(x) + 0, backend="aot_eager")(x)
    assert not out.requires_grad and not torch.special.bessel_j0(x).requires_grad
    torch.testing.assert_close(out, torch.special.bessel_j0(x.detach()))


def test_lu_permutation_takes_no_cotangent_as_in_eager():
    def fn(a):
        return torch.linalg.lu(a)

    a = _matrix(5, 0).requires_grad_(True)
    p, _, _ = symc.compile(fn, backend="aot_eager")(a)
    assert not p.requires_grad and not fn(a)[0].requires_grad


@pytest.mark.parametrize("op", [torch.fft.rfft, torch.linalg.eigvals])
def test_complex_result_is_a_graph_break_with_its_reason(op):
    x = torch.randn(4, 4)
    compiled = symc.compile(lambda x: op(x * 2), backend="aot_eager")
    torch.testing.assert_close(compiled(x), op(x * 2))
    report = symc.explain(compiled)
    # the resume function after the break takes the complex value as input: a second break
    assert report.graph_breaks >= 1 and "complex64" in report.breaks[0].reason, str(report)


def test_svd_meta_is_symbolic_with_no_guards():
    env = ShapeEnv()
    s0, s1 = symbolic_size(env, 5), symbolic_size(env, 3)
    a = TensorMeta.contiguous((s0, s1), torch.float32)
    with env, tracing(MetaTracer()):
        u, s, vh = ops.torch_extern("linalg.svd", (a,), (("full_matrices", False),))
    k = sympy.Min(s0, s1)
    assert (u.shape, s.shape, vh.shape) == ((s0, k), (k,), (k, s1))
    assert not env.guards


def test_wrong_shape_rule_is_refused_at_the_example_sizes(monkeypatch):
    wrong = ExternOp("digamma", torch.digamma, lambda a: tuple(a.shape)[:-1])
    monkeypatch.setitem(EXTERN_OPS, "digamma", wrong)
    env = ShapeEnv()
    a = TensorMeta.contiguous((symbolic_size(env, 4), 3), torch.float32)
    with env, tracing(MetaTracer()), pytest.raises(PrimError, match="shape rule"):
        ops.torch_extern("digamma", (a,), ())


def test_every_extern_row_names_a_torch_callable():
    assert len(EXTERN_OPS) > 80
    for name, op in EXTERN_OPS.items():
        assert callable(op.fn) and callable(op.shape), name


@pytest.mark.parametrize("backend", ["aot_eager", "inductor"])
def test_wrong_shape_rule_at_another_size_raises_at_run_time(monkeypatch, backend):
    # agrees with torch at the example size 5 only: a later size must not read past the result
    wrong = ExternOp("digamma", torch.digamma, lambda a: (5, *tuple(a.shape)[1:]))
    monkeypatch.setitem(EXTERN_OPS, "digamma", wrong)
    compiled = symc.compile(lambda x: torch.digamma(x).sum(0), backend=backend)
    x = _positive(5, 0)
    torch.testing.assert_close(compiled(x), torch.digamma(x).sum(0))
    with pytest.raises(PrimError, match="shape .* of its rule"):
        compiled(_positive(7, 0))


@pytest.mark.parametrize("backend", ("aot_eager", "inductor"))
@pytest.mark.parametrize("fn", [lambda a, x: torch.igamma(a, x).sum(),
                                lambda a, x: torch.special.zeta(a, x).sum()])
def test_grad_of_an_argument_torch_cannot_differentiate_raises_as_in_eager(fn, backend):
    # torch has no derivative for igamma's `a` nor zeta's `x`: eager's backward raises, and so
    # must the compiled one (it ran to a silent zero/None gradient before)
    a = _positive(4, 0).requires_grad_()
    x = _positive(4, 1)
    with pytest.raises(NotImplementedError, match="not implemented"):
        fn(a, x).backward()
    compiled = symc.compile(fn, backend=backend)
    with pytest.raises(NotImplementedError, match="not implemented"):
        compiled(a, x).backward()
    assert a.grad is None
