"""Recompile policy (issue 22 part 4) and symbolic Python numbers (part 3):

- slicing a position table to the length (`pe[:, :T]`, BERT's `token_type_ids[:, :T]`) records
  `min(64, s) == s`, not `min(64, s) != 1`: lengths 7, 1 and 9 share one compilation;
- float arguments are 0-d graph inputs: ten scales, one compilation, eager's answers;
- `math.sqrt/log/exp/ceil/floor` of sizes are expressions, `float(size)` and `size / size` too;
- a float used where Python needs a number (a branch) is specialised with a value guard.
Each test counts compilations with symc.explain and compares with eager, forward and backward,
on the test device (SYMC_TEST_DEVICE=cuda: the float inputs and int carriers meet CUDA tensors).
"""

from __future__ import annotations

import math
import re

import pytest
import torch

import symc
from tests.device import DEVICE
from tests.symc.eager_oracle import BACKENDS, assert_matches_eager

SIZES = (7, 1, 2, 13, 40)   # 40: above the first call's hint


def _compiles(compiled) -> int:
    report = symc.explain(compiled)
    assert report.graph_breaks == 0, report.breaks
    return report.compiles


class TinyPositional(torch.nn.Module):
    """GPT/BERT-like: a learned position table sliced to the length, scaled attention."""

    def __init__(self, max_len: int = 64, dim: int = 8):
        super().__init__()
        torch.manual_seed(0)
        self.pe = torch.nn.Parameter(torch.randn(1, max_len, dim, device=DEVICE))
        self.register_buffer("type_ids", torch.zeros(1, max_len, dtype=torch.long))
        self.types = torch.nn.Embedding(2, dim)
        self.qkv = torch.nn.Linear(dim, 3 * dim)

    def forward(self, x):
        b, t, d = x.shape
        types = self.type_ids[:, :t].expand(b, t)           # BERT's buffered token types
        h = x + self.pe[:, :t] + self.types(types)
        q, k, v = self.qkv(h).chunk(3, dim=-1)
        att = (q @ k.transpose(-2, -1)) / math.sqrt(k.size(-1))
        return torch.softmax(att, dim=-1) @ v


@pytest.mark.parametrize("backend", ["eager", "aot_eager", "inductor"])
def test_position_slice_compiles_once_at_lengths_7_1_9(backend):
    model = TinyPositional().to(DEVICE)
    reference = TinyPositional().to(DEVICE)
    reference.load_state_dict(model.state_dict())
    compiled = symc.compile(model, backend=backend)
    for t in (7, 1, 9, 2, 40):
        x = torch.randn(2, t, 8, device=DEVICE)
        out, want = compiled(x), reference(x)
        torch.testing.assert_close(out, want, atol=1e-5, rtol=1e-4)
        out.sum().backward()
        want.sum().backward()
        for (name, p), q in zip(model.named_parameters(), reference.parameters()):
            torch.testing.assert_close(p.grad, q.grad, atol=1e-5, rtol=1e-4, msg=name)
            p.grad, q.grad = None, None
    assert _compiles(compiled) == 1, symc.explain(compiled).recompile_reasons
    guards = [line for line in str(symc.explain(compiled)).splitlines() if "min(" in line]
    assert guards and not any("!= 1" in line for line in guards), guards


def _scaled(x, scale):
    return torch.softmax(x / scale, dim=-1) * scale + 1.5 * scale - x ** scale


def _temperature(x, temperature):
    return torch.softmax(x / temperature, -1), temperature * x.sum()


@pytest.mark.parametrize("backend", BACKENDS)
def test_ten_float_scales_compile_once_with_eager_answers(backend):
    compiled = symc.compile(_temperature, backend=backend)
    for i in range(10):
        temperature = 0.3 + 0.37 * i
        x = torch.randn(3, 5, requires_grad=True, device=DEVICE)
        x2 = x.detach().clone().requires_grad_()
        got, want = compiled(x, temperature), _temperature(x2, temperature)
        for g, w in zip(got, want):
            torch.testing.assert_close(g, w)
        (got[0].sum() + got[1]).backward()
        (want[0].sum() + want[1]).backward()
        torch.testing.assert_close(x.grad, x2.grad)
    assert _compiles(compiled) == 1, symc.explain(compiled).recompile_reasons


def _float_dtypes(x, scale):
    # eager: a Python float next to an int tensor gives the default dtype; next to f64, f64
    return x.long() * scale, x.double() / scale, scale - x.half(), x.long() > scale


@pytest.mark.parametrize("backend", ["eager", "aot_eager", "inductor"])
def test_float_argument_keeps_eager_dtypes(backend):
    compiled = symc.compile(_float_dtypes, backend=backend)
    for scale in (0.1, 2.5, -3.25):
        x = torch.randn(4, 3, device=DEVICE) * 4
        for got, want in zip(compiled(x, scale), _float_dtypes(x, scale)):
            assert got.dtype == want.dtype
            torch.testing.assert_close(got, want, atol=1e-3, rtol=1e-3)
    assert _compiles(compiled) == 1


def _branch_on_float(x, scale):
    if scale > 1.0:
        return x * scale
    return x - scale


def test_float_read_by_a_branch_is_specialised():
    compiled = symc.compile(_branch_on_float, backend="aot_eager")
    for scale in (2.0, 0.5, 3.0, 0.5):
        x = torch.randn(3, device=DEVICE)
        torch.testing.assert_close(compiled(x, scale), _branch_on_float(x, scale))
    assert symc.explain(compiled).compiles >= 2  # the branch reads the value: guarded


def _size_math(x):
    n, d = x.size(0), x.size(-1)
    scale = math.sqrt(d) * math.log(n + 1) + math.exp(-d) + float(n) / d
    blocks = math.ceil(n / 4) + math.floor(d / 3) + int(n / 2)
    return x / scale + blocks, torch.tensor([math.sqrt(d), n / 2])


def test_math_of_sizes_matches_eager_forward_and_backward():
    assert_matches_eager(
        _size_math, lambda n: [torch.randn(n, n + 2, requires_grad=True, device=DEVICE)], SIZES)


@pytest.mark.parametrize("backend", BACKENDS)
def test_math_of_sizes_compiles_once(backend):
    compiled = symc.compile(_size_math, backend=backend)
    for n in SIZES:
        x = torch.randn(n, n + 2, device=DEVICE)
        for got, want in zip(compiled(x), _size_math(x)):
            torch.testing.assert_close(got, want)
    assert _compiles(compiled) == 1, symc.explain(compiled).recompile_reasons


def test_float_argument_gradients_match_eager():
    assert_matches_eager(
        _scaled, lambda n: [torch.rand(2, n, requires_grad=True, device=DEVICE) + 0.5, 1.75],
        SIZES)


def _int_scale(x, n):
    return x.repeat(1, n) * n + x.new_ones(n * x.size(1)), x.sum(1) / n


@pytest.mark.parametrize("backend", BACKENDS)
def test_int_argument_is_a_symbol_one_compile(backend):
    compiled = symc.compile(_int_scale, backend=backend)
    for n in (3, 4, 7, 2, 11, 40):
        x = torch.randn(3, 5, device=DEVICE)
        for got, want in zip(compiled(x, n), _int_scale(x, n)):
            torch.testing.assert_close(got, want)
    assert _compiles(compiled) == 1, symc.explain(compiled).recompile_reasons


def _int_as_dim_and_branch(x, dim, k):
    y = x.sum(dim)          # prims needs an int dim: specialised, no break
    if k > 3:               # a branch: the guard k > 3, not k == value
        return y * k
    return y - k


def test_int_read_as_dim_or_branch_is_guarded_not_broken():
    compiled = symc.compile(_int_as_dim_and_branch, backend="aot_eager")
    calls = [(0, 5), (0, 9), (0, 2), (1, 5), (0, 1), (0, 0), (0, -4), (1, 12)]
    for dim, k in calls:
        x = torch.randn(4, 6, device=DEVICE)
        torch.testing.assert_close(compiled(x, dim, k), _int_as_dim_and_branch(x, dim, k))
    report = symc.explain(compiled)
    assert report.graph_breaks == 0, report.breaks
    # entries: (dim 0, k > 3), (dim 0, 1 <= k <= 3: k = 1 reuses it), (dim 1, k > 3), and
    # k = 0, -4, which stay constants (a symbol is >= 1); k = 9 and k = 12 reuse an entry
    assert report.compiles == 5, report.recompile_reasons
    assert not any("== 5" in r for r in report.recompile_reasons), report.recompile_reasons


def test_int_argument_gradients_match_eager():
    assert_matches_eager(lambda x, n: (x * n).repeat(n, 1),
                         lambda m: [torch.randn(2, m, requires_grad=True, device=DEVICE), 3], SIZES)


def _break_with_live_sizes(x):
    y = x * 2
    n = x.size(0)
    print("graph break")   # a side effect: the rest runs in a resume function
    return y.view(n, -1) + n, y.reshape(-1, x.size(1)) * x


@pytest.mark.parametrize("backend", ["eager", "aot_eager", "inductor"])
def test_resume_function_inherits_the_frames_symbols(backend, capsys):
    compiled = symc.compile(_break_with_live_sizes, backend=backend)
    for n in (7, 5, 1, 9, 3, 40):
        x = torch.randn(n, 4, device=DEVICE)
        for got, want in zip(compiled(x), _break_with_live_sizes(x)):
            torch.testing.assert_close(got, want)
    report = symc.explain(compiled)
    assert report.graph_breaks == 1
    assert report.compiles == 2, report.recompile_reasons   # the frame and its resume function
    resume = str(report).split("entry 1 of")[1]
    # n and y's sizes are the symbols of x's sizes (guarded equal), not fresh ones or values
    assert re.search(r"s\d+ == s\d+", resume), resume
    assert "== 7" not in resume, resume


def _short_circuits(x, mask):
    # transformers' sdpa: `is_causal = q_length > 1 and attention_mask is None and is_causal`
    causal = x.size(1) > 1 and mask is None and True
    either = x.size(0) > 2 or mask is not None
    out = x * 2 if causal else x - 1
    return (out + 1 if either else out), causal


@pytest.mark.parametrize("with_mask", [True, False])
def test_and_or_of_a_size_relation_is_not_decided_early(with_mask):
    compiled = symc.compile(_short_circuits, backend="aot_eager")
    for b, t in ((3, 7), (3, 1), (1, 9), (6, 4), (2, 2), (4, 40)):
        x = torch.randn(b, t, device=DEVICE)
        mask = torch.ones(b, t, device=DEVICE) if with_mask else None
        got, want = compiled(x, mask), _short_circuits(x, mask)
        torch.testing.assert_close(got[0], want[0])
        assert got[1] == want[1] and type(got[1]) is bool
    report = symc.explain(compiled)
    assert report.graph_breaks == 0, report.breaks
    # with a mask `t > 1 and False` is False and `b > 2 or True` True: nothing to decide, one
    # entry for every size (lengths and batches of 1 included); without one `x * 2 if causal`
    # decides `t > 1` (a mul is not if-converted) and `out + 1 if either else out` is one
    # `where(b > 2, out + 1, out)` (capture/if_conversion.py): two entries
    assert report.compiles == (1 if with_mask else 2), report.recompile_reasons


def _is_true(x, mask):
    causal = x.size(1) > 1 and mask is None
    wide = (x.size(0) > 2) is True        # a plain comparison: `is` read it as not True
    return (x + 1 if causal is True else x - 1) * (2 if wide else 3)


def test_size_relation_is_a_bool_for_is():
    compiled = symc.compile(_is_true, backend="eager")
    for b, t in ((3, 5), (3, 1), (2, 3), (4, 4)):
        x = torch.randn(b, t, device=DEVICE)
        torch.testing.assert_close(compiled(x, None), _is_true(x, None))


_TABLE = {2: 10.0, 3: 20.0, 4: 30.0}


def _int_as_key(x, k):
    scale = _TABLE[k] if k in _TABLE else 1.0
    return x * scale + k


def test_int_argument_as_a_dict_key_is_specialised_not_broken():
    compiled = symc.compile(_int_as_key, backend="eager")
    for k in (2, 3, 7, 2):
        x = torch.randn(3, device=DEVICE)
        torch.testing.assert_close(compiled(x, k), _int_as_key(x, k))
    report = symc.explain(compiled)
    assert report.graph_breaks == 0 and report.compiles == 3, report


def _int_in_python(x, k):
    pads = [0] * k                      # list * int
    label = "k=%d" % k                  # str % int
    return x + len(pads) + len(label)


def test_int_argument_in_plain_python_is_specialised_not_broken():
    compiled = symc.compile(_int_in_python, backend="eager")
    for k in (3, 4, 3):
        x = torch.randn(3, device=DEVICE)
        torch.testing.assert_close(compiled(x, k), _int_in_python(x, k))
    report = symc.explain(compiled)
    assert report.graph_breaks == 0 and report.compiles == 2, report


def test_int_argument_guards_read_as_the_argument():
    """The int's symbol is read from its carrier input, but guards and explain name `L['k']`."""
    compiled = symc.compile(_int_as_dim_and_branch, backend="aot_eager")
    compiled(torch.randn(3, 4, 5, device=DEVICE), 1, 5)
    text = str(symc.explain(compiled))
    assert re.search(r"s\d+ >= 4\s+L\['k'\]", text), text  # the branch's guard, k > 3
    assert "bool).size(1)" not in text, text
