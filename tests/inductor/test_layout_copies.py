"""No layout copies: transposes and reshapes the lowering can absorb never become copy kernels.

Each graph is compiled once with symbolic sizes, its kernels are counted (a *copy kernel* is a
pointwise group that only loads one buffer and stores it elsewhere: the work a view should have
done), and it runs at sizes 1, 2, 7 and 13 (above the hint) against eager torch. The last test
trains a Linear-GELU-Linear model end to end: the backward graph (weight gradients are
transposed products, biases same-shape reshapes of sums) has no copy kernel, and its grads match
eager on every backend.
"""

from __future__ import annotations

import contextlib

import pytest
import torch
from inductor_graphs import prims_graph

from inductor import compile_graph
from inductor.codegen.common import KernelGroup
from inductor.ir import ExternNode, index_vars
from inductor.ops import CountingHandler
from prims import ops

SIZES = (1, 2, 7, 13)


def copy_kernels(cg) -> list:
    """The kernel groups of `cg` that move one buffer's elements and compute nothing."""
    found = []
    for step in cg.steps:
        if not isinstance(step, KernelGroup) or step.rranges:
            continue
        counter = CountingHandler()
        for node in step.nodes:
            node.body(counter, index_vars("x", len(step.xranges)), ())
        if len(counter.loads) == 1 and len(counter.stores) == 1 and counter.count == 0:
            found.append(step.name)
    return found


def kernels(cg) -> int:
    return sum(isinstance(s, KernelGroup) for s in cg.steps)


def externs(cg) -> list:
    return [s.prim.name for s in cg.steps if isinstance(s, ExternNode)]


def compiled(fn, shapes, backend):
    graph, env, _ = prims_graph(fn, shapes)
    return compile_graph(graph, env, device_backend=backend)


def inputs_at(shapes, n, seed=0):
    gen = torch.Generator().manual_seed(seed + n)
    return [torch.randn(tuple(n if s == "a" else (n + 3 if s == "b" else s) for s in shape),
                        generator=gen) for shape in shapes]


def check(cg, shapes, reference):
    for n in SIZES:
        args = inputs_at(shapes, n)
        got = cg(*args)
        want = reference(*args)
        want = want if isinstance(want, tuple) else (want,)
        assert len(got) == len(want)
        for g, w in zip(got, want):
            assert g.shape == w.shape, f"n={n}"
            torch.testing.assert_close(g, w, atol=1e-5, rtol=1e-5, msg=f"n={n}")


@pytest.mark.parametrize("backend", ["torch", "cpp"])
def test_transpose_of_a_transpose_is_the_operand_itself(backend):
    # a linear's backward reads the weight as permute(permute(w)): was a transposing copy of w
    shapes = [("a", 5), (6, 5)]
    cg = compiled(lambda x, w: ops.mm(x, ops.permute(ops.permute(ops.permute(w, (1, 0)), (1, 0)),
                                                        (1, 0))), shapes, backend)
    assert kernels(cg) == 0 and externs(cg) == ["mm"], cg.wrapper_source
    check(cg, shapes, lambda x, w: x @ w.t())


@pytest.mark.parametrize("backend", ["torch", "cpp"])
def test_a_permute_of_a_permute_composes(backend):
    shapes = [("a", 3, "b")]
    cg = compiled(lambda x: ops.exp(ops.permute(ops.permute(x, (1, 2, 0)), (0, 2, 1))), shapes,
                  backend)
    assert kernels(cg) == 1 and not copy_kernels(cg)
    check(cg, shapes, lambda x: x.permute(1, 2, 0).permute(0, 2, 1).exp())


@pytest.mark.parametrize("backend", ["torch", "cpp"])
def test_a_same_shape_reshape_of_a_sum_is_the_sum(backend):
    # a bias gradient: sum(g, (0,)) reshaped to its own shape was copied into a second buffer
    shapes = [("a", 4)]
    cg = compiled(lambda g: ops.reshape(ops.sum(g, (0,)), (4,)), shapes, backend)
    plain = compiled(lambda g: ops.sum(g, (0,)), shapes, backend)  # split or not (symbolic rows)
    assert kernels(cg) == kernels(plain) and not copy_kernels(cg), cg.wrapper_source
    check(cg, shapes, lambda g: g.sum(0))


@pytest.mark.parametrize("backend", ["torch", "cpp"])
def test_a_transposed_product_is_computed_transposed(backend):
    # a weight gradient (x^T @ g)^T: was mm into a buffer, then a transposing copy kernel
    shapes = [("a", 3), ("a", 5)]
    cg = compiled(lambda x, g: ops.permute(ops.mm(ops.permute(x, (1, 0)), g), (1, 0)), shapes,
                  backend)
    assert kernels(cg) == 0 and externs(cg) == ["mm"], cg.wrapper_source
    check(cg, shapes, lambda x, g: (x.t() @ g).t())


@pytest.mark.parametrize("backend", ["torch", "cpp"])
def test_a_batched_transposed_product_is_computed_transposed(backend):
    shapes = [(2, "a", 3), (2, 3, "b")]
    cg = compiled(lambda a, b: ops.exp(ops.permute(ops.bmm(a, b), (0, 2, 1))), shapes, backend)
    assert externs(cg) == ["bmm"] and kernels(cg) == 1 and not copy_kernels(cg)
    check(cg, shapes, lambda a, b: torch.bmm(a, b).transpose(1, 2).exp())


@pytest.mark.parametrize("backend", ["torch", "cpp"])
def test_a_transposed_product_used_twice_is_left_alone(backend):
    shapes = [("a", 3), (3, 4)]
    cg = compiled(lambda x, w: (ops.permute(ops.mm(x, w), (1, 0)), ops.exp(ops.mm(x, w))),
                  shapes, backend)
    check(cg, shapes, lambda x, w: ((x @ w).t(), (x @ w).exp()))


@pytest.mark.parametrize("backend", ["torch", "cpp"])
def test_a_reshaped_buffer_reaches_a_matmul_as_a_view(backend):
    # a linear over [batch, time, channels]: x.view(B*T, C) @ w was a copy of x first
    shapes = [(2, "a", 4), (4, 3)]

    def fn(x, w):
        flat = ops.reshape(x, (2 * x.shape[1], 4))
        return ops.reshape(ops.mm(flat, w), (2, x.shape[1], 3)), ops.mm(
            ops.permute(flat, (1, 0)), ops.reshape(ops.exp(flat), (2 * x.shape[1], 4)))
    cg = compiled(fn, shapes, backend)
    assert externs(cg) == ["mm", "mm"] and not copy_kernels(cg), cg.wrapper_source
    assert kernels(cg) == 1  # exp(x): the only computed value
    check(cg, shapes, lambda x, w: ((x.reshape(-1, 4) @ w).reshape(2, -1, 3),
                                    x.reshape(-1, 4).t() @ x.reshape(-1, 4).exp()))


@pytest.mark.parametrize("backend", ["torch", "cpp"])
def test_a_reshape_of_a_permuted_buffer_is_still_copied(backend):
    # not a view of contiguous memory: the copy must stay, and be right
    shapes = [("a", 4), (4, 3)]
    cg = compiled(lambda x, w: ops.mm(ops.reshape(ops.permute(x, (1, 0)), (x.shape[0], 4)), w),
                  shapes, backend)
    check(cg, shapes, lambda x, w: x.t().reshape(x.shape[0], 4) @ w)


class MLP(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(8, 16)
        self.proj = torch.nn.Linear(16, 4)

    def forward(self, x):
        return self.proj(torch.nn.functional.gelu(self.fc(x)))


def _train(runner, model, x, mode=None):
    model.zero_grad(set_to_none=True)
    with mode if mode is not None else contextlib.nullcontext():
        out = runner(x)
        out.square().sum().backward()
    return out.detach(), {k: p.grad.clone() for k, p in model.named_parameters()}



def _recorded_graphs(monkeypatch) -> list:
    """The CompiledGraphs inductor builds from here on (torch ops for the CPU kernels)."""
    import inductor

    monkeypatch.setenv("SYMC_CPU_BACKEND", "torch")
    graphs = []
    original = inductor.compile_graph

    def recording(graph, env=None, **kw):
        graphs.append(original(graph, env, **kw))
        return graphs[-1]
    monkeypatch.setattr(inductor, "compile_graph", recording)
    return graphs

@pytest.mark.parametrize("backend", ["eager", "aot_eager", "inductor"])
def test_mlp_backward_has_no_copy_kernel(backend, monkeypatch):
    import symc

    graphs = _recorded_graphs(monkeypatch)
    torch.manual_seed(0)
    model = MLP()
    compiled_model = symc.compile(model, backend=backend)
    for n in (3, 1, 2, 7, 13):  # the first call's size is the hint; 13 is above it
        x = torch.randn(n, 8, generator=torch.Generator().manual_seed(n))
        want_out, want_grads = _train(model, model, x)
        got_out, got_grads = _train(compiled_model, model, x)
        torch.testing.assert_close(got_out, want_out, atol=1e-5, rtol=1e-5)
        for name in want_grads:
            torch.testing.assert_close(got_grads[name], want_grads[name], atol=1e-5, rtol=1e-5,
                                       msg=f"grad of {name} at n={n}")
    if backend == "inductor":
        forward, backward = graphs
        assert not copy_kernels(backward), backward.wrapper_source
        assert not copy_kernels(forward), forward.wrapper_source
        # gelu(h) recomputed with h + b's saved twin, two bias grads (sums), gelu'(h) * g:
        # 13 kernels before (copies, and the twin in a kernel of its own); the bias grads are
        # column sums over symbolic rows, split into partials (in their producers' kernels or
        # their own) and final sums (inductor/reduction_split.py): one kernel more
        assert kernels(backward) <= 5, backward.wrapper_source


@pytest.mark.parametrize("backend", ["eager", "aot_eager", "inductor"])
def test_a_reshaped_product_output_is_a_tensor_of_its_own(backend, monkeypatch):
    # logits[B, T, V] returned as the mm's buffer re-shaped: no copy, and the caller may modify
    # it in place like eager's result (not a view of a graph intermediate)
    import symc

    monkeypatch.setenv("SYMC_CPU_BACKEND", "torch")

    def fn(x, w):
        return (x @ w).relu().reshape(2, -1, 3) @ w.t(), x.reshape(2, -1, 4) @ w

    compiled_fn = symc.compile(fn, backend=backend)
    w = torch.randn(4, 3)
    for n in (4, 1, 2, 7, 13):
        x = torch.randn(2 * n, 4, generator=torch.Generator().manual_seed(n))
        got, want = compiled_fn(x, w), fn(x, w)
        for g, e in zip(got, want):
            torch.testing.assert_close(g, e, atol=1e-5, rtol=1e-5)
            assert g._base is None or backend != "inductor"
            g.add_(1.0)
            torch.testing.assert_close(g, e + 1.0, atol=1e-5, rtol=1e-5)


class Attention(torch.nn.Module):
    """GPT's attention: qkv from one linear, heads split by view + transpose, sdpa, merged."""

    def __init__(self, d=16, heads=2):
        super().__init__()
        self.qkv, self.proj, self.heads = torch.nn.Linear(d, 3 * d), torch.nn.Linear(d, d), heads

    def forward(self, x):
        b, t, c = x.shape
        q, k, v = (z.view(b, t, self.heads, c // self.heads).transpose(1, 2)
                   for z in self.qkv(x).split(c, dim=2))
        y = torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True)
        return self.proj(y.transpose(1, 2).contiguous().view(b, t, c))


class CopyCounter(torch.utils._python_dispatch.TorchDispatchMode):
    """Counts aten clones (what `.contiguous()` of a non-contiguous tensor runs)."""

    def __init__(self):
        super().__init__()
        self.clones = 0

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        self.clones += func.overloadpacket.__name__ == "clone"
        return func(*args, **(kwargs or {}))


@pytest.mark.parametrize("backend", ["eager", "aot_eager", "inductor"])
def test_attention_outputs_stay_in_their_operands_layout(backend, monkeypatch):
    # sdpa returns out (and its backward dq, dk, dv) laid out like q (k, v): [b, t, h, e] memory
    # seen as [b, h, t, e]. Kept so, the merge of the heads is a view for the projection's mm;
    # it was a clone in the extern's wrapper plus a transposing copy kernel (forward), three
    # clones (backward)
    import symc

    graphs = _recorded_graphs(monkeypatch)
    torch.manual_seed(0)
    model = Attention()
    compiled_model = symc.compile(model, backend=backend)
    for n in (5, 1, 2, 7, 13):
        x = torch.randn(2, n, 16, generator=torch.Generator().manual_seed(n))
        want_out, want_grads = _train(model, model, x)
        counter = CopyCounter()
        got_out, got_grads = _train(compiled_model, model, x, counter)
        torch.testing.assert_close(got_out, want_out, atol=1e-5, rtol=1e-5)
        for name in want_grads:
            torch.testing.assert_close(got_grads[name], want_grads[name], atol=1e-5, rtol=1e-5,
                                       msg=f"grad of {name} at n={n}")
        if backend == "inductor":
            assert counter.clones == 0, f"n={n}"
    if backend == "inductor":
        forward, backward = graphs
        assert externs(forward) == ["mm", "sdpa", "mm"]
        # the one copy left: the partition saves the projection's input transposed for the
        # weight gradient (its choice, not a layout of the lowering); was two, plus 4 clones
        assert len(copy_kernels(forward)) <= 1, forward.wrapper_source
        assert not copy_kernels(backward), backward.wrapper_source
