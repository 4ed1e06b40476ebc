"""A transcendental computed once per element across a kernel's r loops (inductor/codegen/
cpp_reuse.py): softmax's sum pass stores exp(x - max) into the output, the output pass reads it
back and scales it by the reciprocal of the row sum. The facts are read from the generated C++
(no timing); the values are checked against eager, special values and both thread copies
included; division by a row statistic keeps eager's result for a subnormal divisor."""

from __future__ import annotations

import re

import pytest
import torch

import inductor
from tests.inductor.inductor_graphs import decomposed, prims_graph


def _compiled(fn, shapes):
    graph, env, _ = prims_graph(fn, shapes)
    return inductor.compile_graph(graph, env, device_backend="cpp")


def _r_loops(source: str) -> list[str]:
    """The text of every loop over r0 (its pragma line, header and body)."""
    lines, loops = source.splitlines(), []
    for i, line in enumerate(lines):  # the blocked copies' lane loops too (cpp_blocked.py)
        if re.search(r"for \(int64_t (r0|rj\d+) = ", line):
            depth, j = 0, i
            while True:
                depth += lines[j].count("{") - lines[j].count("}")
                if depth <= 0 and j > i:
                    break
                j += 1
            start = i - 1 if "#pragma" in lines[i - 1] else i
            loops.append("\n".join(lines[start:j + 1]))
    return loops


SOFTMAX = (lambda x: decomposed(torch.softmax, x, -1), [("a", "b")])


@pytest.mark.no_debug_bounds  # checked kernels keep the recomputation (no reuse there)
def test_softmax_computes_exp_once_per_element():
    source = _compiled(*SOFTMAX).kernel_source
    kernel = source[source.find('extern "C" void k'):]
    loops = _r_loops(kernel)
    sums = [loop for loop in loops if "reduction(+:" in loop or re.search(r"_b\[rj\d+\] \+=", loop)]
    outputs = [loop for loop in loops if "static_cast<float>" in loop and "acc" not in loop]
    blocked = [loop for loop in sums if "_b[rj" in loop]  # row copies' blocked sums
    assert blocked and len(outputs) == len(sums) - len(blocked), kernel  # one output pass each
    for loop in sums:
        assert loop.count("symc_exp(") == 1 and "// reused later" in loop, loop
    for loop in outputs:
        assert "symc_exp(" not in loop and "std::exp(" not in loop, loop
        assert "// reused" in loop, loop
    assert kernel.count("symc_exp(") == len(sums), kernel
    assert re.search(r"float tmp\d+ = \(1 / fwd_buf\d+_\d+\);", kernel), kernel


@pytest.mark.parametrize("rows,cols", [(1, 1), (7, 768), (50, 1000), (3, 70001)])
def test_softmax_matches_eager_with_special_values(rows, cols):
    cg = _compiled(*SOFTMAX)
    x = torch.randn(rows, cols, generator=torch.Generator().manual_seed(rows))
    if rows > 2:
        x[0, 0] = float("inf")  # NaN row
        x[1] = float("-inf")  # all -inf: NaN row
        x[2, : cols // 2] = float("-inf")  # half the row masked
    (out,) = cg(x)
    torch.testing.assert_close(out, torch.softmax(x, -1), equal_nan=True)


def test_two_outputs_of_one_exp_match_eager():
    """exp(x) is an output and the numerator of the normalized one: whichever buffer holds the
    reused value, both outputs are right."""
    def fn(x):
        e = decomposed(torch.exp, x)
        return decomposed(torch.div, e, decomposed(torch.sum, e, 1, keepdim=True)), e
    cg = _compiled(fn, [("a", "b")])
    x = torch.randn(9, 300, generator=torch.Generator().manual_seed(1))
    norm, e = cg(x)
    torch.testing.assert_close(e, torch.exp(x))
    torch.testing.assert_close(norm, torch.exp(x) / torch.exp(x).sum(1, keepdim=True))


def test_division_by_a_subnormal_row_statistic_matches_eager():
    """1 / b overflows for |b| < 2^-128: such a row divides (x * (1 / b) would be inf)."""
    cg = _compiled(lambda x: decomposed(torch.div, x, decomposed(
        torch.sum, decomposed(torch.abs, x), 1, keepdim=True)), [("a", "b")])
    x = torch.full((3, 16), 1e-44)
    x[1] = 2.0
    x[2, 0] = 0.0
    (out,) = cg(x)
    want = x / x.abs().sum(1, keepdim=True)
    assert torch.isfinite(out).all(), out
    torch.testing.assert_close(out, want)
