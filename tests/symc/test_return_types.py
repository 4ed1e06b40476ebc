"""Ops with a dim return `torch.return_types.*` as in eager (issue 18, class 7): `.values` and
`.indices` work inside and outside the compiled function, on every backend."""

from __future__ import annotations

import pytest
import torch

from prims import structseq_type
from tests.symc.eager_oracle import assert_matches_eager

SIZES = (4, 1, 2, 7, 11)

CALLS = {
    "max": lambda x: x.max(-1),
    "min": lambda x: torch.min(x, 0, keepdim=True),
    "sort": lambda x: x.sort(-1, descending=True),
    "topk": lambda x: torch.topk(x, 1, -1),
    "median": lambda x: x.median(-1),
    "mode": lambda x: x.mode(-1),
    "kthvalue": lambda x: x.kthvalue(1, -1),
    "cummax": lambda x: x.cummax(-1),
}


@pytest.mark.parametrize("name", sorted(CALLS))
def test_result_is_the_eager_named_tuple(name):
    assert_matches_eager(CALLS[name], lambda n: [torch.randn(3, n, requires_grad=True)], SIZES)


def _fields_inside(x):
    m = x.max(-1)
    s = torch.sort(x, 0)
    return m.values * 2 + m.indices, s.values.sum(0) - s.indices[0]


def test_fields_read_inside_the_compiled_region():
    assert_matches_eager(_fields_inside, lambda n: [torch.randn(3, n, requires_grad=True)],
                         SIZES)


def test_plain_tuples_stay_plain():
    assert_matches_eager(lambda x: torch.var_mean(x, -1), lambda n: [torch.randn(3, n)],
                         (4, 2, 7))
    assert structseq_type(torch.var_mean) is None
    assert structseq_type(torch.max) is torch.return_types.max
    assert structseq_type(torch.Tensor.topk) is torch.return_types.topk
    assert structseq_type(len) is None


def _unpack_and_index(x):
    v, i = x.max(-1)
    top = x.topk(1, -1)
    return v + top[0][..., 0] + i + len(top), isinstance(top, tuple)


def test_named_tuple_unpacks_and_indexes_like_a_tuple():
    assert_matches_eager(_unpack_and_index, lambda n: [torch.randn(3, n, requires_grad=True)],
                         SIZES)
