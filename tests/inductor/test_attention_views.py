"""Attention reads q, k, v as views of the projection that made them (inductor/strided.py).

GPT-2's q, k, v are slices of one [B, T, 3C] matmul output, viewed [B, T, H, D] and transposed
to [B, H, T, D]. The attention externs get `buf.as_strided(...)` of that buffer, in the forward
and in the backward (the saved projection), where a pointwise kernel used to copy each slice.
A layout the kernels do not read as is (a last dim not contiguous, strides that are not whole
16-byte steps, a slice of a transposed value) is still copied: a view is never what makes the
answer right. Every case compares values and gradients with eager at sizes 1, 2, 7 and 13.
"""

from tests.device import DEVICE, interpret_triton, use_triton

interpret_triton()

import pytest  # noqa: E402
import sympy  # noqa: E402
import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402
from inductor_graphs import prims_graph  # noqa: E402

import symc  # noqa: E402

from inductor import compile_graph, strided  # noqa: E402
from inductor.ir import ExternNode, StridedBuffer  # noqa: E402
from prims import ops  # noqa: E402
from symbolic import Analyzer  # noqa: E402
from test_layout_copies import copy_kernels  # noqa: E402
from tests.models.models import QKVAttention  # noqa: E402

pytestmark = pytest.mark.usefixtures("default_device")
SIZES = (1, 2, 7, 13)


# (size, stride, new size): the view's strides must be torch's `Tensor.view`'s, or None where
# torch refuses the view
VIEW_CASES = [
    ((2, 3, 48), (144, 48, 1), (2, 3, 4, 12)),  # split a sliced last dim (q of a projection)
    ((2, 3, 16), (144, 48, 1), (6, 16)),        # merge outer dims that are contiguous
    ((2, 3, 16), (144, 48, 1), (2, 48)),        # merge dims that are not: no view
    ((4, 1, 6), (6, 6, 1), (4, 6)),             # drop a size-1 dim
    ((4, 6), (6, 1), (4, 1, 6, 1)),             # add size-1 dims
    ((5, 8), (16, 2), (5, 2, 4)),               # split a dim of stride 2
    ((5, 8), (16, 2), (40,)),                   # merge with a gap: no view
]


@pytest.mark.parametrize("size,stride,new", VIEW_CASES)
def test_view_strides_are_torchs(size, stride, new):
    base = torch.arange(400.0, device="cpu").as_strided(size, stride)
    try:
        want = base.view(new).stride()
    except RuntimeError:
        want = None
    got = strided._view_strides(size, stride, new, Analyzer())
    got = None if got is None else tuple(int(x) for x in got)
    # a size-1 dim's stride is never read: compare the others
    keep = [i for i, n in enumerate(new) if n != 1]
    assert (got is None) == (want is None), (got, want)
    if got is not None:
        assert [got[i] for i in keep] == [want[i] for i in keep]


def test_symbolic_view_strides():
    s0, s1 = sympy.symbols("s0 s1", integer=True, positive=True)
    size, stride = (s0, s1, 48), (48 * s1, 48, 1)
    assert strided._view_strides(size, stride, (s0, s1, 4, 12), Analyzer()) == (
        48 * s1, 48, 12, 1)
    assert strided._view_strides(size, stride, (s0 * s1, 48), Analyzer()) == (48, 1)
    assert strided._view_strides((s0, s1, 16), stride, (s0, 16 * s1), Analyzer()) is None


def _split_heads(qkv, heads, head_dim):
    """q, k, v of a [b, t, 3*h*d] projection as [b, h, t, d] views (GPT-2's attention)."""
    b, t = qkv.shape[:2]
    c = heads * head_dim
    return tuple(qkv[:, :, i * c:(i + 1) * c].reshape(b, t, heads, head_dim).permute(0, 2, 1, 3)
                 for i in range(3))


def _prims_split(x, heads, head_dim):
    b, t = x.shape[:2]
    c = heads * head_dim
    return tuple(ops.permute(ops.reshape(ops.slice(x, 2, i * c, (i + 1) * c, 1),
                                         (b, t, heads, head_dim)), (0, 2, 1, 3))
                 for i in range(3))


def _views(cg) -> list:
    return [a for s in cg.steps if isinstance(s, ExternNode) for a in s.args
            if isinstance(a, StridedBuffer)]


@pytest.mark.parametrize("backend", ["torch", "cpp", "triton"])
@pytest.mark.parametrize("causal", [True, False])
def test_projection_slices_reach_attention_as_views(backend, causal):
    heads, d = 2, 8
    shapes = [(3, "a", 3 * heads * d)]

    def fn(x):  # the output back in (b, t, h, d) order, as GPT-2 reads it
        q, k, v = _prims_split(x, heads, d)
        return ops.permute(ops.sdpa(q, k, v, None, 0.0, causal, None, None, 0), (0, 2, 1, 3))
    graph, env, _ = prims_graph(fn, shapes)
    cg = compile_graph(graph, env, device_backend=backend)
    views = _views(cg)
    # before: a kernel copied q, k and v into three (b, t, h, d) buffers
    assert len(views) == 3 and not copy_kernels(cg), cg.wrapper_source
    assert [str(v.offset) for v in views] == ["0", "16", "32"]
    assert "as_strided" in cg.wrapper_source
    for t in SIZES:
        x = torch.randn(3, t, 3 * heads * d)
        want = F.scaled_dot_product_attention(*_split_heads(x, heads, d), is_causal=causal)
        torch.testing.assert_close(cg(x)[0], want.transpose(1, 2), atol=1e-5, rtol=1e-5,
                                   msg=f"t={t}")


@pytest.mark.parametrize("layout", ["step2", "transposed", "unaligned"])
def test_layouts_attention_cannot_read_are_copied(layout):
    """Slices every 2nd element (last stride 2), slices of a transposed value and heads 6 wide
    in f32 (strides of 6 elements, not whole 16 bytes): each operand is copied and right."""
    heads, d = 2, 6 if layout == "unaligned" else 8
    c = heads * d
    width = 6 * c if layout == "step2" else 3 * c
    shapes = [(2, width, "a")] if layout == "transposed" else [(2, "a", width)]

    def operands(x, prim):
        if layout == "transposed":
            x = prim.permute(x, (0, 2, 1))
        if layout == "step2":
            b, t = x.shape[:2]
            return tuple(prim.permute(prim.reshape(prim.slice(x, 2, i * 2 * c, (i + 1) * 2 * c,
                                                              2), (b, t, heads, d)), (0, 2, 1, 3))
                         for i in range(3))
        return _prims_split(x, heads, d) if prim is ops else _split_heads(x, heads, d)

    graph, env, _ = prims_graph(lambda x: ops.sdpa(*operands(x, ops), None, 0.0, True, None,
                                                    None, 0), shapes)
    cg = compile_graph(graph, env, device_backend="cpp")
    # the projection (the input) is never read in place: a kernel writes what attention reads
    assert all(v.buffer.name != "arg0" for v in _views(cg)), cg.wrapper_source
    assert "arg0" not in [s.args[0].name for s in cg.steps if isinstance(s, ExternNode)
                          and hasattr(s.args[0], "name")]
    for t in SIZES:
        x = torch.randn(*(2, width, t) if layout == "transposed" else (2, t, width))
        if layout == "transposed":
            q, k, v = _split_heads(x.permute(0, 2, 1), heads, d)
        elif layout == "step2":
            q, k, v = (x[:, :, i * 2 * c:(i + 1) * 2 * c:2].reshape(2, t, heads, d)
                       .permute(0, 2, 1, 3) for i in range(3))
        else:
            q, k, v = _split_heads(x, heads, d)
        want = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        torch.testing.assert_close(cg(x)[0], want, atol=1e-5, rtol=1e-5, msg=f"t={t}")


def _grads(model, fn, x):
    model.zero_grad(set_to_none=True)
    x = x.detach().clone().requires_grad_(True)
    y = fn(x)
    y.square().sum().backward()
    return (y.detach(), x.grad, *[p.grad for p in model.parameters()])


def _generated(compiled) -> dict:
    report = symc.explain(compiled)
    return {name: src for e in report.entries for name, src in e.generated_code.items()}


@pytest.mark.parametrize("d,heads,layout", [(32, 4, "gpt2"), (24, 2, "gpt2"), (20, 2, "gpt2"),
                                            (24, 3, "interleaved"), (32, 4, "timm")])
def test_training_gradients_match_eager(d, heads, layout):
    """The block trained at T = 1, 2, 7, 13 (one compile), its input a transposed tensor: views
    where aligned (heads of 8 f32), copies for heads of 10 f32 and for the timm layout."""
    _check_training(d, heads, layout)


def test_training_on_triton_kernels(monkeypatch):
    """The same with Triton kernels (the interpreter on the CPU)."""
    use_triton(monkeypatch)
    _check_training(32, 4, "gpt2")


def _check_training(d, heads, layout):
    torch.manual_seed(0)
    model = QKVAttention(d, heads, layout).to(DEVICE)
    compiled = symc.compile(model, backend="inductor")
    for t in (5, *SIZES):
        x = torch.randn(2, d, t, device=DEVICE).transpose(1, 2)
        for got, want in zip(_grads(model, compiled, x), _grads(model, model, x)):
            torch.testing.assert_close(got, want, rtol=1e-4, atol=1e-5, msg=f"t={t}")
    assert symc.explain(compiled).compiles == 1
    code = _generated(compiled)
    forward = next(src for name, src in code.items() if name.startswith("forward"))
    backward = next(src for name, src in code.items() if name.startswith("backward"))
    aligned = (d // heads) % 4 == 0 and layout != "timm"
    for src in (forward, backward):
        assert (src.count(".as_strided(") == 3) == aligned, src


@pytest.mark.parametrize("layout", ["gpt2", "interleaved", "timm"])
def test_bf16_training_is_as_close_to_f32_as_eager(layout):
    """bf16 (CPU: torch's CPU flash pair; CUDA: cuDNN or flash attention) on the views: each
    value and gradient within twice eager's bf16 error against float32, plus one ulp."""
    torch.manual_seed(0)
    model = QKVAttention(64, 4, layout).to(DEVICE, torch.bfloat16)
    ref = QKVAttention(64, 4, layout).to(DEVICE)
    ref.load_state_dict({k: v.float() for k, v in model.state_dict().items()})
    compiled = symc.compile(model, backend="inductor")
    for t in (7, 1, 13):
        x = torch.randn(2, t, 64, device=DEVICE, dtype=torch.bfloat16)
        got, want = _grads(model, compiled, x), _grads(model, model, x)
        for a, b, r in zip(got, want, _grads(ref, ref, x.float())):
            err, base = ((y.float() - r).abs().max().item() for y in (a, b))
            assert err <= 2 * base + 2 ** -7 * r.abs().max().item(), (layout, t, err, base)
    assert symc.explain(compiled).compiles == 1
