"""The next row's prefetch in row-reduction kernels (inductor/codegen/cpp_prefetch.py): emitted
for the buffers a kernel reads whole rows of, guarded by the last row and the tensor's size,
absent from pointwise kernels and reductions over a non-contiguous dim; values match eager on
both sides of the size threshold."""

from __future__ import annotations

import re

import pytest
import torch
import torch.nn.functional as F

import inductor
from inductor.codegen.cpp_prefetch import MIN_ELEMENTS
from prims import ops
from tests.inductor.inductor_graphs import decomposed, prims_graph


def _compiled(fn, shapes):
    graph, env, _ = prims_graph(fn, shapes)
    return inductor.compile_graph(graph, env, device_backend="cpp")


def _kernels(compiled) -> str:
    source = compiled.kernel_source
    return source[source.find('extern "C" void k'):]


def _layer_norm():
    return _compiled(lambda x, w, b: decomposed(F.layer_norm, x, x.size()[-1:], w, b),
                     [("a", "b"), ("b",), ("b",)])


@pytest.mark.no_debug_bounds  # checked kernels are left as they are
def test_row_kernels_prefetch_the_next_row_of_row_inputs_only():
    kernel = _kernels(_layer_norm())
    assert re.search(rf"if \(x0 \+ 1 < s0 && s0 \* s1 >= {MIN_ELEMENTS}\) {{", kernel), kernel
    prefetched = set(re.findall(r"const char\* pf_(\w+) = ", kernel))
    assert prefetched == {"arg0"}, prefetched  # the weight and bias are not rows of x0
    assert "(s1 * (1 + x0))" in kernel or "((1 + x0) * s1)" in kernel, kernel


def test_no_prefetch_in_pointwise_or_column_reductions():
    assert "__builtin_prefetch" not in _kernels(_compiled(lambda x: ops.exp(x), [("a", "b")]))
    column_sum = _compiled(lambda x: ops.sum(x, (0,)), [("a", "b")])
    assert "__builtin_prefetch" not in _kernels(column_sum)


@pytest.mark.parametrize("rows", [3, MIN_ELEMENTS // 512 + 1])
def test_values_on_both_sides_of_the_threshold(rows):
    compiled = _layer_norm()
    gen = torch.Generator().manual_seed(rows)
    x = torch.randn(rows, 512, generator=gen)
    w, b = torch.randn(512, generator=gen), torch.randn(512, generator=gen)
    torch.testing.assert_close(compiled(x, w, b)[0], F.layer_norm(x, (512,), w, b),
                               rtol=1e-4, atol=1e-4)
    soft = _compiled(lambda t: decomposed(torch.softmax, t, -1), [("a", "b")])
    torch.testing.assert_close(soft(x)[0], torch.softmax(x, -1))
