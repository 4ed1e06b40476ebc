"""The runtime: split graphs wrapped in a torch.autograd.Function reproduce eager training on a
composite model (linear + layer_norm + gelu + softmax + cross_entropy, via prims.decompose), at
several sizes from one compilation, with AdamW, gradient accumulation, no_grad and dropout."""

from __future__ import annotations

import torch
import torch.utils._python_dispatch
import torch.fx as fx
import torch.nn.functional as F

from autograd_aot import compile_for_training, reference_compile, requires_grad_flags
from prims import decompose, ops
from symbolic import LocalSource, ShapeEnv, SizeSource, TensorMeta
from tests.autograd_aot.builders import build_case

H, C = 8, 5


def _placeholder(graph, name, shape, dtype=torch.float64):
    node = graph.placeholder(name)
    node.meta["val"] = TensorMeta.contiguous(shape, dtype)
    return node


def _model_graph(env, hint=6):
    s0 = env.create_symbol(hint, SizeSource(LocalSource("x"), 0))
    g = fx.Graph()
    x = _placeholder(g, "x", (s0, H))
    target = _placeholder(g, "target", (s0,), torch.int64)
    w = _placeholder(g, "w", (C, H))
    b = _placeholder(g, "b", (C,))
    ln_w = _placeholder(g, "ln_w", (C,))
    ln_b = _placeholder(g, "ln_b", (C,))
    h = g.call_function(F.linear, (x, w, b))
    h = g.call_function(F.layer_norm, (h, (C,), ln_w, ln_b))
    h = g.call_function(F.gelu, (h,))
    p = g.call_function(F.softmax, (h,), {"dim": -1})
    logits = g.call_function(torch.add, (h, p))
    loss = g.call_function(F.cross_entropy, (logits, target))
    g.output((loss, p))
    return decompose(g, env)


def _eager(x, target, w, b, ln_w, ln_b):
    h = F.gelu(F.layer_norm(F.linear(x, w, b), (C,), ln_w, ln_b))
    p = F.softmax(h, dim=-1)
    return F.cross_entropy(h + p, target), p


def _params(seed=0):
    gen = torch.Generator().manual_seed(seed)
    shapes = [(C, H), (C,), (C,), (C,)]
    return [torch.randn(s, generator=gen, dtype=torch.float64, requires_grad=True)
            for s in shapes]


def _batch(n, seed):
    gen = torch.Generator().manual_seed(seed)
    return (torch.randn(n, H, generator=gen, dtype=torch.float64),
            torch.randint(0, C, (n,), generator=gen))


class _Counting:
    def __init__(self):
        self.graphs = []

    def __call__(self, graph, env):
        self.graphs.append(graph)
        return reference_compile(graph, env)


def _compiled_model():
    env = ShapeEnv()
    graph = _model_graph(env)
    compile_fn = _Counting()
    run = compile_for_training(graph, env, [False, False, True, True, True, True], compile_fn)
    return run, compile_fn, env


def test_composite_model_grads_match_eager_at_every_size():
    run, compile_fn, env = _compiled_model()
    guards = list(env.guards)
    for n in (6, 1, 3, 17):
        x, target = _batch(n, n)
        params = _params()
        loss, p = run(x, target, *params)
        (loss + p.sum() * 0.1).backward()
        ref_params = _params()
        ref_loss, ref_p = _eager(x, target, *ref_params)
        (ref_loss + ref_p.sum() * 0.1).backward()
        torch.testing.assert_close(loss, ref_loss)
        torch.testing.assert_close(p, ref_p)
        for got, want in zip(params, ref_params):
            torch.testing.assert_close(got.grad, want.grad)
    assert len(compile_fn.graphs) == 2, "forward and backward compile once for all sizes"
    assert env.guards == guards


def test_adamw_with_gradient_accumulation_matches_eager():
    run, _, _ = _compiled_model()
    params, ref_params = _params(1), _params(1)
    opt = torch.optim.AdamW(params, lr=0.05)
    ref_opt = torch.optim.AdamW(ref_params, lr=0.05)
    for step in range(3):
        for micro, n in enumerate((4, 7)):  # two micro-batches of different lengths per step
            x, target = _batch(n, 10 * step + micro)
            loss, _ = run(x, target, *params)
            (loss / 2).backward()
            ref_loss, _ = _eager(x, target, *ref_params)
            (ref_loss / 2).backward()
        opt.step()
        ref_opt.step()
        opt.zero_grad()
        ref_opt.zero_grad()
    for got, want in zip(params, ref_params):
        torch.testing.assert_close(got, want)


def test_no_grad_runs_only_the_forward_graph():
    run, compile_fn, _ = _compiled_model()
    x, target = _batch(5, 0)
    params = _params()
    with torch.no_grad():
        loss, p = run(x, target, *params)
    assert loss.grad_fn is None
    assert compile_fn.graphs == [run.inference.graph], "only the forward-only graph compiled"
    ref_loss, ref_p = _eager(x, target, *params)
    torch.testing.assert_close(loss, ref_loss.detach())


def test_backward_compiles_lazily_on_first_backward():
    run, compile_fn, _ = _compiled_model()
    x, target = _batch(4, 0)
    loss, _ = run(x, target, *_params())
    assert len(compile_fn.graphs) == 1
    loss.backward()
    assert len(compile_fn.graphs) == 2


class _ZeroFills(torch.utils._python_dispatch.TorchDispatchMode):
    """Records the shapes of the zero-filled tensors the runtime makes while it is active (not
    those the compiled graphs make: a generated kernel inlines its constants)."""

    in_graph = False

    def __init__(self):
        super().__init__()
        self.shapes = []

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        if not _ZeroFills.in_graph and func.overloadpacket.__name__ in (
                "zeros", "zero_", "new_zeros", "full", "fill_"):
            self.shapes.append(tuple(out.shape))
        return out


class _CountingOutsideFills(_Counting):
    def __call__(self, graph, env):
        run = super().__call__(graph, env)

        def outside(*inputs):
            _ZeroFills.in_graph = True
            try:
                return run(*inputs)
            finally:
                _ZeroFills.in_graph = False
        return outside


def test_an_output_without_grad_costs_no_zero_filled_tangent():
    # loss.backward() alone: p gets no grad; the backward variant without p's tangent makes
    # its zeros inside the graph (before: torch.zeros of p's shape on every backward)
    env = ShapeEnv()
    compile_fn = _CountingOutsideFills()
    run = compile_for_training(_model_graph(env), env, [False, False, True, True, True, True],
                               compile_fn)
    for n in (6, 1, 13):
        x, target = _batch(n, n)
        params, ref_params = _params(), _params()
        loss, p = run(x, target, *params)
        with _ZeroFills() as fills:
            loss.backward()
        assert (n, C) not in fills.shapes
        ref_loss, _ = _eager(x, target, *ref_params)
        ref_loss.backward()
        for got, want in zip(params, ref_params):
            torch.testing.assert_close(got.grad, want.grad)
    # one forward, one backward variant (p's tangent absent), compiled once for all sizes
    assert len(compile_fn.graphs) == 2
    variant = compile_fn.graphs[1]
    tangents = [n for n in variant.nodes if n.op == "placeholder" and n.meta.get("tangent")]
    assert len(tangents) == 1
    # both grads given: the full backward, a third compile
    x, target = _batch(4, 4)
    loss, p = run(x, target, *_params())
    (loss + p.sum()).backward()
    assert len(compile_fn.graphs) == 3


def _mixed_outputs(d, n, make):
    x, w = make((d, 4)), make((d, 4), grad=False)
    y = ops.mul(ops.tanh(x), w)
    return y, ops.argmax(y, 1), ops.exp(w)


def test_outputs_without_grad_are_marked_non_differentiable():
    graph, env, inputs, flags, _ = build_case(_mixed_outputs, 5)
    run = compile_for_training(graph, env, flags, reference_compile)
    for n in (5, 2):
        _, _, (x, w), _, _ = build_case(_mixed_outputs, n, seed=n)
        x.requires_grad_()
        y, idx, ew = run(x, w)
        assert y.requires_grad and not idx.requires_grad and not ew.requires_grad
        assert idx.dtype == torch.int64
        y.sum().backward()
        torch.testing.assert_close(x.grad, (1 - torch.tanh(x.detach()) ** 2) * w)


def _dropout_graph(env):
    s0 = env.create_symbol(6, SizeSource(LocalSource("x"), 0))
    g = fx.Graph()
    x = _placeholder(g, "x", (s0, H), torch.float32)
    y = g.call_function(F.dropout, (x, 0.5, True))
    z = g.call_function(torch.tanh, (y,))
    g.output((z,))
    return decompose(g, env)


def test_dropout_mask_is_recomputed_from_the_seed_not_saved():
    env = ShapeEnv()
    graph = _dropout_graph(env)
    run = compile_for_training(graph, env, [True, False], reference_compile)
    info = run.training.split.info
    assert "philox_rand" in info.recomputed_ops, str(info)
    assert all(not s.meta.startswith("b8") for s in info.saved), str(info)
    assert any(s.meta == "i64[]" for s in info.saved), f"the seed is saved: {info}"
    for n in (6, 3):
        x = torch.randn(n, H, requires_grad=True)
        seed = torch.tensor(1234 + n)
        (z,) = run(x, seed)
        z.sum().backward()
        kept = z.detach() != 0
        y = torch.where(kept, x.detach() * 2.0, 0.0)
        want = torch.where(kept, (1 - torch.tanh(y) ** 2) * 2.0, 0.0)
        torch.testing.assert_close(x.grad, want)
        assert 0 < kept.float().mean() < 1


def test_symbol_inputs_are_passed_as_ints():
    env = ShapeEnv()
    s0 = env.create_symbol(4, SizeSource(LocalSource("x"), 0))
    g = fx.Graph()
    n = g.placeholder("n")
    n.meta["val"] = s0
    x = _placeholder(g, "x", (s0, 3))
    y = g.call_function(torch.mul, (x, s0))
    g.output((y,))
    run = compile_for_training(decompose(g, env), env, [False, True], reference_compile)
    for size in (4, 7):
        xs = torch.randn(size, 3, dtype=torch.float64, requires_grad=True)
        (out,) = run(size, xs)
        torch.testing.assert_close(out, xs.detach() * size)
        out.sum().backward()
        torch.testing.assert_close(xs.grad, torch.full_like(xs, float(size)))


def test_no_input_requiring_grad_gives_the_inference_callable():
    env = ShapeEnv()
    graph = _model_graph(env)
    run = compile_for_training(graph, env, [False] * 6, reference_compile)
    x, target = _batch(3, 0)
    loss, _ = run(x, target, *[p.detach() for p in _params()])
    assert loss.grad_fn is None and not hasattr(run, "training")


def test_requires_grad_defaults_to_the_placeholder_metas():
    env = ShapeEnv()
    s0 = env.create_symbol(4, SizeSource(LocalSource("x"), 0))
    g = fx.Graph()
    x = _placeholder(g, "x", (s0, 3))
    w = g.placeholder("w")
    w.meta["val"] = TensorMeta.contiguous((3,), torch.float64, requires_grad=True)
    y = g.call_function(torch.mul, (x, w))
    g.output((y,))
    graph = decompose(g, env)
    assert requires_grad_flags(graph) == [False, True]
    run = compile_for_training(graph, env, None, reference_compile)
    xs, ws = torch.randn(4, 3, dtype=torch.float64), torch.randn(3, dtype=torch.float64,
                                                                  requires_grad=True)
    run(xs, ws)[0].sum().backward()
    torch.testing.assert_close(ws.grad, xs.sum(0))
