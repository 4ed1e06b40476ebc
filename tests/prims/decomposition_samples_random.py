"""Samples for the random draws (prims/decompositions/random_draws.py) that no OpInfo entry
calls directly (OpInfo wraps them in wrapper_set_seed lambdas); registered into SAMPLES.
Their values are symc's stream, not torch's: tests/prims/test_decompositions.py compares only
shapes and dtypes for `RANDOM_DRAWS` (tests/symc/test_rng_state.py tests the distributions).
"""

from __future__ import annotations

import torch

from tests.prims.decomposition_samples import F32, sample

T = torch.Tensor

RANDOM_DRAWS = frozenset({
    torch.rand, torch.randn, torch.rand_like, torch.randn_like, torch.randint,
    torch.randint_like, torch.bernoulli, T.bernoulli, T.bernoulli_, torch.multinomial,
    T.multinomial, torch.normal, torch.alpha_dropout, torch.feature_dropout,
    torch.feature_alpha_dropout,
})


@sample(torch.rand, torch.randn)
def _factory(n, make, dt):
    return [((n, 3), {}), (((2, n),), {"dtype": dt})]


@sample(torch.rand_like, torch.randn_like)
def _like(n, make, dt):
    return [((make((n, 3), dt),), {})]


@sample(torch.randint)
def _randint(n, make, dt):
    return [((10, (n, 2)), {}), ((3, 10, (2, n)), {"dtype": torch.int32})]


@sample(torch.randint_like)
def _randint_like(n, make, dt):
    return [((make((n, 3), dt), 5), {}), ((make((n, 2), dt), -2, 2), {})]


@sample(torch.bernoulli, T.bernoulli, T.bernoulli_)
def _bernoulli(n, make, dt):
    return [((make((n, 3), dt), 0.3), {})]


@sample(torch.multinomial, T.multinomial)
def _multinomial(n, make, dt):
    return [((make((n, 4), dt, "positive"), 3), {}),
            ((make((n, 4), dt, "positive"), 5, True), {})]


@sample(torch.normal)
def _normal(n, make, dt):
    return [((make((n, 3), dt), 2.0), {}), ((1.0, make((n, 3), dt, "positive")), {}),
            ((make((n, 3), dt), make((n, 3), dt, "positive")), {}), ((1.0, 2.0, (n, 3)), {})]


@sample(torch.alpha_dropout, torch.feature_dropout, torch.feature_alpha_dropout)
def _dropout_variants(n, make, dt):
    return [((make((n, 3, 2), dt), 0.3, True), {}), ((make((n, 3, 2), dt), 0.3, False), {})]


__all__ = ["F32", "RANDOM_DRAWS"]
