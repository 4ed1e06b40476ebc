"""The generated per-call path: argument binder, guarded call, fast module reads."""

from __future__ import annotations

import contextlib

import pytest
import torch

import symc
from capture import frame_locals
from symc.fast_path import make_binder


def plain(x, y=2):
    return x


def kw_only(x, *, scale=3, shift):
    return x


def star(x, *rest, **options):
    return x


def posonly(a, b=1, /, c=2):
    return a


def closure_of(value):
    def inner(x):
        return x + value

    return inner


def empty_cell():
    def inner(x):
        return later  # noqa: F821 - assigned after inner is defined

    return inner
    later = 1  # noqa: F841 - unreachable: the cell stays empty


BINDER_CASES = [
    (plain, (1,), {}),
    (plain, (1, 5), {}),
    (plain, (1,), {"y": 7}),
    (kw_only, (1,), {"shift": 4}),
    (kw_only, (1,), {"shift": 4, "scale": 0}),
    (star, (1, 2, 3), {"a": 4}),
    (star, (1,), {}),
    (posonly, (1, 2), {"c": 9}),
    (closure_of(5), (1,), {}),
    (empty_cell(), (1,), {}),
]


@pytest.mark.parametrize("fn, args, kwargs", BINDER_CASES,
                         ids=lambda v: getattr(v, "__qualname__", None))
def test_binder_gives_the_same_locals_as_frame_locals(fn, args, kwargs):
    got = make_binder(fn)(*args, **kwargs)
    expected = frame_locals(fn, args, kwargs)
    assert got == expected and list(got) == list(expected), make_binder(fn).source


def test_binder_of_a_method_fills_self_and_rejects_bad_calls_like_python():
    class M(torch.nn.Module):
        def forward(self, x, scale=2):
            return x * scale

    m = M()
    bind = make_binder(M.forward, m)
    assert bind(1) == {"self": m, "x": 1, "scale": 2}
    with pytest.raises(TypeError):
        bind()
    with pytest.raises(TypeError):
        make_binder(plain)(1, nope=2)


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = torch.nn.ModuleList([torch.nn.Linear(4, 4) for _ in range(2)])

    def forward(self, x):
        for layer in self.layers:
            x = layer(x)
        return x


def test_module_parameters_read_through_module_dicts_follow_replacements():
    torch.manual_seed(0)
    net = Net()
    compiled = symc.compile(net, backend="eager")
    x = torch.randn(3, 4)
    with torch.no_grad():
        assert torch.allclose(compiled(x), net(x))
        source = compiled._compiled_forward.entries[0].checker.guarded_source
        assert "._modules['layers']" in source and "._parameters['weight']" in source, source
        # a new Parameter of the same shape: no recompile, and its values are used
        net.layers[0].weight = torch.nn.Parameter(torch.randn(4, 4))
        assert torch.allclose(compiled(x), net(x))
        assert symc.explain(compiled).compiles == 1
        # a different shape: the tensor guard fails, symc recompiles
        net.layers[1] = torch.nn.Linear(4, 4, bias=False)
        assert torch.allclose(compiled(x), net(x))
        assert symc.explain(compiled).compiles == 2


def test_attribute_moved_between_module_dicts_is_still_read_correctly():
    class Scale(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.w = torch.nn.Parameter(torch.ones(2), requires_grad=False)

        def forward(self, x):
            return x * self.w

    m = Scale()
    compiled = symc.compile(m, backend="eager")
    x = torch.ones(2)
    assert torch.equal(compiled(x), x)
    del m.w
    m.register_buffer("w", torch.full((2,), 3.0))  # now in _buffers, not _parameters
    assert torch.equal(compiled(x), m(x))


def test_guarded_call_agrees_with_the_check_function():
    import guards

    def f(x):
        return x * 2 if x.shape[0] > 8 else x + 1

    g = symc.compile(f, backend="eager")
    g(torch.ones(4))
    entry = g.entries[0]
    probe = entry.checker.guarded(lambda L, G, *inputs: "ran")
    for value in [torch.ones(4), torch.ones(9), torch.ones(4, dtype=torch.int64), 3, None]:
        L = {"x": value}
        passes = entry.checker.check(L, {}) == -1
        assert (probe(L, {}) == "ran") == passes
        assert (probe(L, {}) is guards.MISS) == (not passes)


def test_calls_under_autocast_skip_the_entries_compiled_without_it():
    def f(x):
        return x @ x

    g = symc.compile(f, backend="eager")
    x = torch.randn(4, 4)
    assert g(x).dtype == torch.float32
    with torch.autocast("cpu", dtype=torch.bfloat16):
        assert g(x).dtype == torch.bfloat16  # not entry 0's float32 graph
    assert "autocast state cpu bfloat16 differs from off" in str(g.recompile_reasons[0])
    hits = g.entries[0].hits
    assert g(x).dtype == torch.float32 and g.entries[0].hits == hits + 1


@contextlib.contextmanager
def cuda_autocast_flag(dtype):
    """CUDA autocast's thread state on any machine (`torch.autocast("cuda")` switches itself
    off without CUDA): CPU tensors get no casts, every autocast check of the call path sees it."""
    enabled, before = torch.is_autocast_enabled("cuda"), torch.get_autocast_dtype("cuda")
    torch.set_autocast_enabled("cuda", True)
    torch.set_autocast_dtype("cuda", dtype)
    try:
        yield
    finally:
        torch.set_autocast_enabled("cuda", enabled)
        torch.set_autocast_dtype("cuda", before)


def test_entries_compiled_under_autocast_take_the_guarded_path_keyed_by_its_state(monkeypatch):
    def f(x):
        return x * 2 + 1

    g = symc.compile(f, backend="eager")
    x = torch.randn(5)
    with cuda_autocast_flag(torch.bfloat16):
        torch.testing.assert_close(g(x), f(x))  # compiled under cuda bf16
    general = []
    original = g._general_call
    monkeypatch.setattr(g, "_general_call", lambda *a: general.append(1) or original(*a))
    with cuda_autocast_flag(torch.bfloat16):
        y = torch.randn(7)
        torch.testing.assert_close(g(y), f(y))  # another size: the same entry
        hits = g.entries[0].hits
        torch.testing.assert_close(g(x), f(x))
    assert general == [] and g.entries[0].hits == hits + 1 and g.compiles == 1
    with cuda_autocast_flag(torch.float16):  # another autocast dtype: not the bf16 entry
        torch.testing.assert_close(g(x), f(x))
    assert general == [1] and g.compiles == 2
    assert "autocast state cuda float16 differs from cuda bfloat16" in str(g.recompile_reasons[-1])
    torch.testing.assert_close(g(x), f(x))  # autocast off: a third entry, then no general path
    assert g.compiles == 3 and g.entries[2].autocast is None


def test_entry_with_a_runtime_assert_reads_its_inputs_once_and_still_asserts():
    from symbolic.errors import ShapeError

    def f(logits, target):
        return torch.nn.functional.cross_entropy(logits, target)

    g = symc.compile(f, backend="eager")
    target = torch.tensor([0, 1, 2, 1])
    g(torch.randn(4, 3), target)
    entry = g.entries[0]
    assert entry.capture.env.asserts, "expected the target's size check as a runtime assert"
    assert "_entry.asserts(L, G)" in entry.guarded.__globals__["_call"].source
    reads = []
    original = entry.read_inputs
    entry.read_inputs = lambda L, G: reads.append(1) or original(L, G)
    logits, target = torch.randn(6, 3), torch.tensor([0, 1, 2, 1, 0, 2])
    torch.testing.assert_close(g(logits, target), f(logits, target))
    assert reads == []  # the guarded call's own reads served the run
    with pytest.raises(ShapeError, match="target size"):
        g(torch.randn(5, 3), target)


def _run_of(entry):
    """The callable the entry's generated call runs now (its namespace's `_run`)."""
    return entry.guarded.__globals__["_call"].__globals__["_run"]


def test_inductor_entry_calls_its_generated_wrapper_directly_from_the_second_call():
    from symc.backends import lazy_compiles
    from symc.fast_path import direct_callable

    def f(x, w):
        return torch.nn.functional.layer_norm(x, (x.shape[-1],), w) * 2

    g = symc.compile(f)
    x, w = torch.randn(5, 12), torch.randn(12)
    torch.testing.assert_close(g(x, w), f(x, w))  # the miss: compiled, run by entry(L, G)
    torch.testing.assert_close(g(x, w), f(x, w))  # the guarded call's first run
    entry = g.entries[0]
    wrapper = direct_callable(entry.run)
    compiled = lazy_compiles(entry.run)["inference"].compiled  # inductor's CompiledGraph
    assert wrapper is compiled.run and wrapper.__code__.co_filename.startswith("<symc wrapper")
    assert _run_of(entry) is wrapper  # the seed, lazy-compile and CompiledGraph frames are gone
    for rows in (1, 7, 13):  # one compilation serves the other sizes through the same wrapper
        x = torch.randn(rows, 12)
        torch.testing.assert_close(g(x, w), f(x, w))
    assert g.compiles == 1 and entry.hits == 5


def test_direct_call_stops_at_a_layer_that_does_work():
    """Layers that change the call (enable grad, draw a seed, choose training) are kept."""
    from symc.backends import Forward
    from symc.call_mode import with_grad_enabled
    from symc.fast_path import direct_callable

    def inner(*inputs):
        return (torch.is_grad_enabled(),)

    forward = Forward(inner)
    assert direct_callable(forward) is inner
    wrapped = with_grad_enabled(forward)  # functools.wraps copies attributes, not `direct`
    assert direct_callable(wrapped) is wrapped
    with torch.no_grad():
        assert direct_callable(wrapped)() == (True,)


def test_entry_compiled_under_no_grad_that_enables_grad_still_records_it():
    def f(x, w):
        with torch.enable_grad():
            return (x * w).sum()

    g = symc.compile(f)
    x, w = torch.randn(4), torch.randn(4, requires_grad=True)
    with torch.no_grad():
        for _ in range(3):  # the generated call resolves its run after the first
            out = g(x, w)
            assert out.requires_grad
            (grad,) = torch.autograd.grad(out, w)
            torch.testing.assert_close(grad, x)
