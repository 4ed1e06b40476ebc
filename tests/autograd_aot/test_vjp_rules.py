"""Every VJP rule against torch.autograd: a small prims graph per prim (symbolic sizes), its joint
graph run with reference implementations, compared with torch.autograd.grad of the same program
on real float64 tensors, at sizes 1, 2 and 5."""

from __future__ import annotations

import pytest
import sympy
import torch

import autograd_aot
from autograd_aot import AutogradError, build_joint, vjp_rule_for
from prims import PRIMS, run_reference
from tests.autograd_aot.builders import build_case
from tests.autograd_aot.vjp_cases import CASES

SIZES = (1, 2, 5)
NOT_DIFFERENTIABLE = {"sdpa_backward", "sdpa_dropout_backward", "torch_extern_backward",
                      "convolution_backward"}  # no double backward


class _Replay:
    def __init__(self, tensors):
        self.tensors = iter(tensors)

    def __call__(self, *args, **kwargs):
        return next(self.tensors)


def _as_tuple(x):
    return x if isinstance(x, tuple) else (x,)


def joint_grads(name, n):
    """(grads from the joint graph, grads from torch.autograd) for case `name` at size n."""
    fn = CASES[name]
    graph, env, inputs, flags, _ = build_case(fn, n, seed=n)
    joint = build_joint(graph, env, flags)
    leaves = [t.clone().requires_grad_(f) for t, f in zip(inputs, flags)]
    outs = _as_tuple(fn(n, n, _Replay(leaves)))
    gen = torch.Generator().manual_seed(100 + n)
    tangents = [torch.randn(o.shape, generator=gen, dtype=torch.float64).to(o.dtype)
                for o, d in zip(outs, joint.output_differentiable) if d]
    diff_outs = [o for o, d in zip(outs, joint.output_differentiable) if d]
    wanted = [x for x, f in zip(leaves, flags) if f]
    expected = torch.autograd.grad(diff_outs, wanted, tangents, allow_unused=True)
    expected = [torch.zeros_like(x) if e is None else e for x, e in zip(wanted, expected)]
    feed = [*inputs, *tangents]
    # the hints are the sizes here; some graphs (slice of d + 4 rows) never show d bare
    symbols = {s: sympy.Integer(v) for s, v in env.hints.items()}
    got = run_reference(joint.graph, feed, symbols)
    forward = got[: len(outs)]
    for f, o in zip(forward, outs):
        torch.testing.assert_close(f, o.detach())
    return list(got[len(outs):]), expected


@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("name", sorted(CASES))
def test_vjp_matches_torch_autograd(name, n):
    got, expected = joint_grads(name, n)
    assert len(got) == len(expected)
    for i, (g, e) in enumerate(zip(got, expected)):
        assert g.shape == e.shape, f"input {i}: grad shape {tuple(g.shape)} vs {tuple(e.shape)}"
        assert g.dtype == e.dtype, f"input {i}: grad dtype {g.dtype} vs {e.dtype}"
        torch.testing.assert_close(g, e, rtol=1e-6, atol=1e-7,
                                   msg=lambda m, i=i: f"{name} n={n} input {i}: {m}")


def test_every_prim_has_a_vjp_rule():
    missing = sorted(p.name for p in PRIMS.values()
                     if p not in autograd_aot.VJP_RULES and p.name not in NOT_DIFFERENTIABLE)
    assert not missing, f"prims without VJP rules: {missing}"


def test_missing_rule_names_the_table():
    with pytest.raises(AutogradError, match="no VJP rule for prim 'sdpa_backward'; add one to "
                                            "autograd_aot/vjp_rules.py"):
        vjp_rule_for(PRIMS["sdpa_backward"])


def test_reduction_backward_broadcasts_along_symbolic_dims():
    graph, env, inputs, flags, _ = build_case(CASES["sum"], 5)
    joint = build_joint(graph, env, flags)
    (grad,) = [g for g in joint.grads if g is not None]
    shape = grad.meta["val"].shape
    assert len(shape) == 3 and shape[1:] == (4, 3)
    assert shape[0].free_symbols, f"expected a symbolic leading dim, found {shape}"
    tangent = joint.tangents[0].meta["val"]
    assert tangent.shape == (4,)
    assert not env.guards, f"differentiating recorded guards: {env.guards}"
