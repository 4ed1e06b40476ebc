"""Cross-entropy over a vocabulary (prims/decompositions/cross_entropy.py): the forward reads the
logits once per row and writes nothing of their size; the backward writes only the gradient,
in the logits' dtype. Counted at run time (every tensor an aten op allocates while the compiled
step runs, through a TorchDispatchMode) and in the generated code (kernels, passes over a row),
on the C++ and Triton (interpreted) paths; results match eager over eager, aot_eager and
inductor, f32 and bf16, sizes 1, 2, primes and above the first call's, with ignored targets,
class weights, label smoothing and every reduction."""

from tests.device import DEVICE, generator, interpret_triton, use_triton

interpret_triton()

import re  # noqa: E402

import pytest  # noqa: E402
import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402
from torch.utils._python_dispatch import TorchDispatchMode  # noqa: E402

import symc  # noqa: E402
from inductor.codegen.triton_configs import use_table  # noqa: E402

pytestmark = pytest.mark.usefixtures("default_device")
KERNEL_BACKENDS = ["triton"] + (["cpp"] if DEVICE == "cpu" else [])


def hf_loss(logits, labels):
    """The Hugging Face / nanoGPT way: upcast, flatten, ignore -100."""
    return F.cross_entropy(logits.float().view(-1, logits.size(-1)), labels.view(-1),
                           ignore_index=-100)


def bf16_loss(logits, labels):
    return F.cross_entropy(logits.view(-1, logits.size(-1)), labels.view(-1))


def log_softmax_nll(logits, labels):
    logp = F.log_softmax(logits.float(), dim=-1)
    return F.nll_loss(logp.view(-1, logp.size(-1)), labels.view(-1), ignore_index=-100)


class Allocations(TorchDispatchMode):
    """(op, dtype) of each fresh tensor of `numel` elements an aten op returns (views and
    in-place results share an input's storage and are not counted)."""

    def __init__(self, numel: int):
        super().__init__()
        self.numel, self.found = numel, []

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        inputs = {a.untyped_storage().data_ptr() for a in torch.utils._pytree.tree_leaves(
            (args, kwargs)) if isinstance(a, torch.Tensor)}
        for t in torch.utils._pytree.tree_leaves(out):
            if (isinstance(t, torch.Tensor) and t.numel() == self.numel
                    and t.untyped_storage().data_ptr() not in inputs):
                self.found.append((str(func), t.dtype))
        return out


def inputs(b, t, v, dtype, seed=0, ignored=1):
    g = generator(seed)
    x = (torch.randn(b, t, v, generator=g, device=DEVICE) * 3).to(dtype).requires_grad_()
    y = torch.randint(0, v, (b, t), generator=g, device=DEVICE)
    y.view(-1)[:ignored] = -100
    return x, y


def step_allocations(fn, b, t, v, dtype):
    """Class-sized allocations of one compiled step (forward, backward) at new sizes."""
    compiled = symc.compile(fn)
    x, y = inputs(2, 3, 11, dtype)
    compiled(x, y).backward()  # compile at the first sizes
    x, y = inputs(b, t, v, dtype, seed=1)
    with Allocations(b * t * v) as fwd:
        loss = compiled(x, y)
    with Allocations(b * t * v) as bwd:
        loss.backward()
    (entry,) = symc.explain(compiled).entries
    return fwd.found, bwd.found, entry


def launches(source: str) -> list[str]:
    """Kernel launches of a generated wrapper (its `call` function)."""
    wrapper = source.split("# ---- kernels")[0]
    return re.findall(r"^\s+(k\d+_\w+)\(", wrapper, re.M)


@pytest.mark.parametrize("backend", KERNEL_BACKENDS)
@pytest.mark.parametrize("fn,dtype", [(hf_loss, torch.bfloat16), (hf_loss, torch.float32),
                                      (bf16_loss, torch.bfloat16)])
def test_step_allocates_only_the_gradient_of_class_size(backend, fn, dtype, monkeypatch):
    if backend == "triton":
        use_triton(monkeypatch)
    fwd, bwd, entry = step_allocations(fn, 2, 5, 67, dtype)
    assert fwd == [], fwd
    assert [d for _, d in bwd] == [dtype], bwd  # the gradient, in the logits' dtype
    code = entry.generated_code
    assert len(launches(code["forward"])) == 2, code["forward"]  # row lse; gather + mean
    assert len(launches(code["backward"])) == 2, code["backward"]  # row cotangent; gradient
    assert "scatter" not in code["backward"], code["backward"]


def test_looped_triton_forward_reads_each_row_once():
    from symc.backends import inductor_compile

    sources = []

    def capture(graph, env=None):
        compiled = inductor_compile(graph, env)
        sources.append(compiled.source)
        return compiled

    with pytest.MonkeyPatch.context() as mp, use_table("tiny"):
        use_triton(mp)
        mp.setattr("symc.backends.inductor_compile", capture)
        compiled = symc.compile(hf_loss)
        x, y = inputs(2, 3, 37, torch.bfloat16)
        compiled(x, y).backward()
    forward = sources[0]
    bodies = [b for b in re.split(r"\ndef ", forward) if re.match(r"\w+_looped\(", b)]
    assert bodies and all(b.count("for roffset in range") == 1 for b in bodies), forward


def test_log_softmax_nll_backward_has_no_scatter():
    fwd, bwd, entry = step_allocations(log_softmax_nll, 2, 5, 67, torch.float32)
    assert "scatter" not in entry.generated_code["backward"]


# --------------------------------------------------------------------------- correctness
SIZES = [(2, 3, 13), (1, 1, 2), (1, 2, 37), (3, 5, 41)]  # 1s, primes; the last above the first


def check_matches_eager(fn, backend, dtype, sizes=SIZES, **kwargs):
    compiled = symc.compile(fn, backend=backend if backend != "triton" else "inductor")
    tol = dict(atol=1e-5, rtol=1e-5) if dtype == torch.float32 else dict(atol=2e-2, rtol=2e-2)
    for i, (b, t, v) in enumerate(sizes):
        x, y = inputs(b, t, v, dtype, seed=i, ignored=min(2, b * t - 1))
        ref_x = x.detach().clone().requires_grad_()
        got, want = compiled(x, y, **kwargs), fn(ref_x, y, **kwargs)
        cot = torch.rand(want.shape, generator=generator(i), device=DEVICE).to(want.dtype)
        got.backward(cot)
        want.backward(cot)
        assert got.dtype == want.dtype
        torch.testing.assert_close(got, want, **tol, msg=f"loss at {(b, t, v)}")
        torch.testing.assert_close(x.grad, ref_x.grad, **tol, msg=f"grad at {(b, t, v)}")
    assert len(symc.explain(compiled).entries) == 1  # one compilation for every size


def configured(logits, labels, reduction="mean", label_smoothing=0.0, weight=None):
    return F.cross_entropy(logits.view(-1, logits.size(-1)).float(), labels.view(-1),
                           weight=weight, reduction=reduction, label_smoothing=label_smoothing)


BACKENDS = ["eager", "aot_eager", "inductor"] + (["triton"] if DEVICE == "cpu" else [])


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
@pytest.mark.parametrize("fn", [hf_loss, bf16_loss, log_softmax_nll])
def test_cross_entropy_matches_eager(backend, dtype, fn, monkeypatch):
    if backend == "triton":
        use_triton(monkeypatch)
    check_matches_eager(fn, backend, dtype)


@pytest.mark.parametrize("backend", ["aot_eager", "inductor"] + (["triton"] if DEVICE == "cpu"
                                                                  else []))
@pytest.mark.parametrize("reduction", ["none", "sum", "mean"])
@pytest.mark.parametrize("smoothing", [0.0, 0.2])
def test_reductions_and_label_smoothing_match_eager(backend, reduction, smoothing, monkeypatch):
    if backend == "triton":
        use_triton(monkeypatch)
    check_matches_eager(configured, backend, torch.float32, reduction=reduction,
                        label_smoothing=smoothing)


@pytest.mark.parametrize("smoothing", [0.0, 0.1])
def test_class_weights_match_eager(smoothing):
    def weighted(logits, labels, weight):
        return F.cross_entropy(logits.view(-1, logits.size(-1)), labels.view(-1), weight=weight,
                               label_smoothing=smoothing)

    compiled = symc.compile(weighted)
    for i, (b, t, v) in enumerate(SIZES):
        x, y = inputs(b, t, v, torch.float32, seed=i, ignored=min(2, b * t - 1))
        w = torch.rand(v, generator=generator(i), device=DEVICE) + 0.5
        ref_x = x.detach().clone().requires_grad_()
        got, want = compiled(x, y, w), weighted(ref_x, y, w)
        got.backward()
        want.backward()
        torch.testing.assert_close(got, want)
        torch.testing.assert_close(x.grad, ref_x.grad)


def test_every_target_ignored_gives_nan_and_zero_grads_like_eager():
    compiled = symc.compile(hf_loss)
    x, y = inputs(2, 3, 7, torch.float32, ignored=6)
    ref_x = x.detach().clone().requires_grad_()
    got, want = compiled(x, y), hf_loss(ref_x, y)
    got.backward()
    want.backward()
    assert got.isnan() and want.isnan()
    torch.testing.assert_close(x.grad, ref_x.grad)


def test_an_out_of_range_target_raises_like_eager():
    compiled = symc.compile(hf_loss)
    x, y = inputs(2, 3, 7, torch.float32)
    compiled(x, y)
    y[0, 0] = 7
    with pytest.raises(Exception, match="(?i)index|out of"):
        compiled(x, y)


@pytest.mark.parametrize("op,class_sized", [(F.softmax, 1), (F.log_softmax, 1)])
def test_softmax_backward_takes_no_gradient_through_the_row_max(op, class_sized):
    """softmax and log_softmax do not depend on their shift: no amax VJP (a tie count and a
    scaled mask of the row's size) in backward (before: 2 and 3 class-sized buffers). The
    gradient is the only class-sized buffer: log_softmax's recomputed `x - max`, read twice,
    is recomputed by each reader (it loads no more bytes than reading it back would,
    inductor/graph.py `recompute_pays`), not written (2 buffers before)."""
    def fn(x, w):
        return (op(x, -1) * w).sum()

    compiled = symc.compile(fn)
    compiled(torch.randn(3, 11, device=DEVICE, requires_grad=True),
             torch.randn(3, 11, device=DEVICE)).backward()
    x = torch.randn(5, 67, generator=generator(0), device=DEVICE).requires_grad_()
    w = torch.randn(5, 67, generator=generator(1), device=DEVICE)
    ref = x.detach().clone().requires_grad_()
    with Allocations(5 * 67) as bwd:
        compiled(x, w).backward()
    fn(ref, w).backward()
    torch.testing.assert_close(x.grad, ref.grad)
    assert [d for _, d in bwd.found] == [torch.float32] * class_sized, bwd.found
