"""Saved values kept in the memory order their producer wrote (inductor/graph.py
`_saved_in_place`, autograd_aot/runtime.py `_mark_saved_layouts`).

Attention returns its output in the memory order of its operands, (b, t, h, e) for a (b, h, t,
e) result; the backward needs it (flash attention's backward, the output projection's weight
gradient). The forward returns such a saved value as a permuted view of its buffer, not as a
contiguous copy (a kernel), and the backward graph, told which saved tensors arrive so, reads
the buffer in place instead of copying it back. A saved tensor that arrives in any other layout
(a saved-tensor hook that packs it contiguous) is copied: gradients are right either way."""

from tests.device import DEVICE

import re  # noqa: E402

import pytest  # noqa: E402
import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402

import symc  # noqa: E402

pytestmark = pytest.mark.usefixtures("default_device")


class Attention(torch.nn.Module):
    def __init__(self, d=32, heads=4):
        super().__init__()
        self.d, self.heads = d, heads
        self.qkv = torch.nn.Linear(d, 3 * d)
        self.proj = torch.nn.Linear(d, d)

    def forward(self, x):
        b, t, _ = x.shape
        q, k, v = self.qkv(x).split(self.d, dim=2)
        q, k, v = (y.view(b, t, self.heads, self.d // self.heads).transpose(1, 2)
                   for y in (q, k, v))
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        return self.proj(y.transpose(1, 2).reshape(b, t, self.d))


def _code(compiled) -> dict:
    report = symc.explain(compiled)
    return {name: src for e in report.entries for name, src in e.generated_code.items()}


def _grads(model, compiled, x):
    out = {}
    for name, fn in (("symc", compiled), ("eager", model)):
        model.zero_grad(set_to_none=True)
        xi = x.detach().clone().requires_grad_(True)
        y = fn(xi)
        (y.square().sum()).backward()
        out[name] = (y.detach(), xi.grad, *[p.grad for p in model.parameters()])
    return out


def _assert_same(got: dict):
    for a, b in zip(got["symc"], got["eager"]):
        torch.testing.assert_close(a, b, rtol=1e-4, atol=1e-5)


def test_saved_attention_output_is_a_view_and_read_in_place():
    torch.manual_seed(0)
    model = Attention().to(DEVICE)
    compiled = symc.compile(model, backend="inductor")
    for t in (5, 1, 13, 2):
        _assert_same(_grads(model, compiled, torch.randn(2, t, 32, device=DEVICE)))
    assert symc.explain(compiled).compiles == 1
    code = _code(compiled)
    forward = next(src for name, src in code.items() if name.startswith("forward"))
    backward = next(src for name, src in code.items() if name.startswith("backward"))
    returns = re.search(r"\n    return \((.*)\)\n", forward).group(1)
    # the output projection's input, saved transposed for its weight gradient (or, where
    # attention saves its log-sum-exp, as the (b, h, t, e) output its backward reads too): a
    # view of attention's output buffer (before: a kernel wrote a transposed copy)
    assert re.search(r"buf\d+(\.view\(\(s\d+\*s\d+, 32\)\)\.mT|\.permute\(\(0, 2, 1, 3\)\))",
                     returns), returns
    # the backward turns it back into that buffer (no copy when it arrives as saved)
    assert re.search(r"\n    (in\d+) = \1(\.mT|\.permute\(\(0, 2, 1, 3\)\))\n", backward), backward


def test_a_saved_tensor_in_another_layout_is_copied_and_right():
    """A pack hook that stores every saved tensor contiguous: the backward's input is not the
    permuted view it was told of, so its prologue copies it; the gradients stay eager's."""
    torch.manual_seed(1)
    model = Attention().to(DEVICE)
    compiled = symc.compile(model, backend="inductor")
    with torch.autograd.graph.saved_tensors_hooks(lambda t: t.contiguous(), lambda t: t):
        for t in (7, 3):
            _assert_same(_grads(model, compiled, torch.randn(3, t, 32, device=DEVICE)))
