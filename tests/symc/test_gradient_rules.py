"""Gradients eager gives and symc used to get wrong (issue 18, classes 2 and 3): embedding rows at
padding_idx get no gradient, a weight used twice (tied embedding and output projection) gets the
sum of both, and var/std reduced over a size-1 dim (or with zero spread) are finite or NaN
exactly where eager is."""

from __future__ import annotations

import warnings

import pytest
import torch
import torch.nn.functional as F

from tests.symc.eager_oracle import assert_matches_eager

SIZES = (4, 1, 2, 7, 11)  # hint, 1, 2, primes, above the hint
V, H = 11, 6


def _weight(seed=0):
    return torch.randn(V, H, generator=torch.Generator().manual_seed(seed), requires_grad=True)


def _ids(n, seed=1):
    ids = torch.randint(0, V, (2, n), generator=torch.Generator().manual_seed(seed))
    ids[0, 0] = 3  # the padding row is always looked up
    return ids


@pytest.mark.parametrize("padding_idx", [3, -8])  # -8 is row 3 of 11
def test_embedding_padding_row_gets_no_gradient(padding_idx):
    def fn(ids, w):
        return F.embedding(ids, w, padding_idx=padding_idx) * 2

    assert_matches_eager(fn, lambda n: [_ids(n), _weight()], SIZES)


def test_embedding_padding_row_gradient_is_zero_not_eager_by_accident():
    import symc

    w = _weight()
    out = symc.compile(lambda ids, w: F.embedding(ids, w, padding_idx=3).sum(),
                       backend="inductor")(_ids(5), w)
    out.backward()
    assert torch.equal(w.grad[3], torch.zeros(H))
    assert w.grad.abs().sum() > 0


def test_module_embedding_with_padding_idx_trains_like_eager():
    emb = torch.nn.Embedding(V, H, padding_idx=0)

    def fn(ids, w):
        return torch.embedding(w, ids, 0) * 1.5

    assert_matches_eager(fn, lambda n: [_ids(n) % 3, emb.weight.detach().clone()
                                        .requires_grad_()], SIZES)


def test_tied_embedding_and_projection_sum_both_gradients():
    def fn(ids, w):
        h = F.embedding(ids, w, padding_idx=0)
        return F.linear(torch.tanh(h), w)

    assert_matches_eager(fn, lambda n: [_ids(n), _weight()], SIZES)


def test_parameter_used_twice_sums_gradients():
    def fn(x, w):
        return x * w + torch.sin(w) * w

    assert_matches_eager(fn, lambda n: [torch.randn(n, H, requires_grad=True),
                                        torch.randn(H, requires_grad=True)], SIZES)


def test_embedding_scale_grad_by_freq_breaks_instead_of_guessing():
    import symc

    fn = symc.compile(lambda ids, w: F.embedding(ids, w, scale_grad_by_freq=True) * 2)
    w, w_ref = _weight(), _weight()
    ids = _ids(5)
    fn(ids, w).sum().backward()
    (F.embedding(ids, w_ref, scale_grad_by_freq=True) * 2).sum().backward()
    torch.testing.assert_close(w.grad, w_ref.grad)
    assert "scale_grad_by_freq" in str(symc.explain(fn))


REDUCTIONS = {
    "var": lambda x: x.var(-1),
    "var_c0": lambda x: x.var(-1, correction=0),
    "std": lambda x: x.std(-1),
    "std_c0": lambda x: x.std(-1, correction=0),
    "std_unbiased_false": lambda x: torch.std(x, -1, unbiased=False, keepdim=True),
    "var_mean": lambda x: torch.var_mean(x, -1, unbiased=True),
    "std_mean": lambda x: torch.std_mean(x, -1, correction=0),
    "var_fractional": lambda x: x.var(-1, correction=0.5),
    "var_c2": lambda x: x.var(-1, correction=2),
    "std_mean_fractional": lambda x: torch.std_mean(x, -1, correction=1.3, keepdim=True),
}


@pytest.mark.parametrize("name", sorted(REDUCTIONS))
def test_var_std_backward_over_a_size_one_dim_match_eager(name):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # eager warns about correction >= count
        assert_matches_eager(REDUCTIONS[name], lambda n: [torch.randn(n, 1, requires_grad=True)],
                             SIZES)


@pytest.mark.parametrize("name", sorted(REDUCTIONS))
def test_var_std_backward_over_a_dynamic_dim_match_eager(name):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert_matches_eager(REDUCTIONS[name], lambda n: [torch.randn(3, n, requires_grad=True)],
                             SIZES)


def test_std_of_constant_rows_has_zero_gradient():
    def fn(x):
        return x.std(-1).sum() + x.std(0, correction=0).sum()

    assert_matches_eager(fn, lambda n: [torch.ones(3, n, requires_grad=True)], (4, 2, 5))
