"""Python objects built inside compiled code (capture/objects.py): a hand-written KV cache in
the style of transformers' DynamicCache is constructed, mutated, returned, discarded or
stored on the module, in one graph with no break; escaping objects are rebuilt after the graph
with eager's attributes (same classes, same `__dict__` order, same values, shared objects kept
shared), and gradients flow through tensors held by them."""

from __future__ import annotations

import abc
import dataclasses
import collections.abc

import pytest
import torch

import symc
from capture import translate

BACKENDS = ["eager", "aot_eager", "inductor"]
SIZES = (3, 1, 2, 7, 13)   # the first is the hint; 1, 2, primes and a size above it follow


class Layer(abc.ABC):
    """A lazily initialised layer cache, as transformers' DynamicLayer."""

    def __init__(self):
        self.keys = None
        self.is_initialized = False

    @abc.abstractmethod
    def update(self, keys): ...


class GrowingLayer(Layer):
    def lazy_init(self, keys):
        self.dtype = keys.dtype
        self.keys = keys.new_zeros((keys.shape[0], 0))
        self.is_initialized = True

    def update(self, keys):
        if not self.is_initialized:
            self.lazy_init(keys)
        self.keys = torch.cat([self.keys, keys], dim=-1)
        return self.keys

    @property
    def length(self):
        return self.keys.shape[-1] if self.is_initialized else 0


class Cache:
    def __init__(self, layer_class=GrowingLayer, owner=None):
        self.layers = []
        self.layer_class = layer_class
        self.owner = owner
        self.updates = 0

    def update(self, keys, index):
        while len(self.layers) <= index:
            self.layers.append(self.layer_class())
        self.updates += 1
        return self.layers[index].update(keys)

    def __len__(self):
        return len(self.layers)

    def __iter__(self):
        for layer in self.layers:
            yield layer.keys


class View(collections.abc.Sequence):
    """A Sequence iterated by the sequence protocol (IndexError ends it)."""

    def __init__(self, cache):
        self._cache = cache

    def __len__(self):
        return len(self._cache)

    def __getitem__(self, i):
        if i >= len(self):
            raise IndexError("out of range")
        return self._cache.layers[i].length


def build_and_return(x, w):
    cache = Cache()
    h = x @ w
    cache.update(h, 0)
    cache.update(h.tanh(), 1)
    k = cache.update(h * 2, 1)
    total = sum(k.sum() for k in cache) if cache else None
    lengths = list(View(cache))
    assert isinstance(cache.layers[1], Layer) and len(cache) == 2
    return k.sum() + total.sum() * lengths[1], cache


def _check_same_object(got, want, seen=None):
    """`got` mirrors eager's `want`: class, attribute names in order, values (tensors close)."""
    assert type(got) is type(want)
    assert list(vars(got)) == list(vars(want))
    for name, value in vars(want).items():
        mine = getattr(got, name)
        if isinstance(value, torch.Tensor):
            torch.testing.assert_close(mine, value)
        elif isinstance(value, list):
            assert len(mine) == len(value)
            for a, b in zip(mine, value):
                _check_same_object(a, b)
        else:
            assert mine == value, name


@pytest.mark.parametrize("backend", BACKENDS)
def test_object_built_mutated_and_returned(backend):
    compiled = symc.compile(build_and_return, backend=backend, fullgraph=True)
    w = torch.randn(4, 3, requires_grad=True)
    for n in SIZES:
        x = torch.randn(n, 4, requires_grad=True)
        loss, cache = compiled(x, w)
        want_loss, want_cache = build_and_return(x, w)
        # sums of terms up to ~1e2 added in another order (on the GPU a column sum runs as
        # 128-row partials and a final sum): a few ulp of the terms, not of the result
        torch.testing.assert_close(loss, want_loss, rtol=1e-5, atol=1e-4)
        _check_same_object(cache, want_cache)
        assert cache.layers[0] is not cache.layers[1]
        # gradients flow through the loss and through a tensor the returned object holds
        got = torch.autograd.grad(loss + cache.layers[1].keys.square().sum(), (x, w))
        want = torch.autograd.grad(want_loss + want_cache.layers[1].keys.square().sum(), (x, w))
        for a, b in zip(got, want):
            torch.testing.assert_close(a, b)
    report = symc.explain(compiled)
    assert (report.graph_breaks, report.recompiles) == (0, 0), str(report)


def build_and_discard(x):
    cache = Cache()
    cache.update(x.sin(), 0)
    cache.update(x.cos(), 0)
    return cache.layers[0].keys.sum(-1)


@pytest.mark.parametrize("backend", BACKENDS)
def test_object_that_does_not_escape_costs_nothing(backend):
    compiled = symc.compile(build_and_discard, backend=backend, fullgraph=True)
    for n in SIZES:
        x = torch.randn(n, 5, requires_grad=True)
        got = compiled(x)
        torch.testing.assert_close(got, build_and_discard(x))
        torch.testing.assert_close(torch.autograd.grad(got.sum(), x)[0],
                                   torch.autograd.grad(build_and_discard(x).sum(), x)[0])
    cap = translate(build_and_discard, (torch.randn(3, 5),))
    (output,) = [n for n in cap.graph.nodes if n.op == "output"]
    assert len(output.args[0]) == 1   # only the result: the cache's tensors are not outputs


class Model(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(4, 4)
        self.cache = None

    def forward(self, x):
        cache = Cache(owner="model")
        out = cache.update(self.lin(x), 0)
        out = cache.update(out.relu(), 0)
        self.cache = cache
        return out.sum(-1)


@pytest.mark.parametrize("backend", BACKENDS)
def test_object_stored_on_the_module_is_rebuilt_there(backend):
    model, reference = Model(), Model()
    reference.load_state_dict(model.state_dict())
    compiled = symc.compile(model, backend=backend, fullgraph=True)
    for n in SIZES:
        x = torch.randn(n, 4)
        got, want = compiled(x), reference(x)
        torch.testing.assert_close(got, want)
        _check_same_object(model.cache, reference.cache)
        first = model.cache
        compiled(x)
        assert model.cache is not first   # a new object per call, as in eager
        got.sum().backward()
        want.sum().backward()
        torch.testing.assert_close(model.lin.weight.grad, reference.lin.weight.grad)
    report = symc.explain(compiled)
    assert report.graph_breaks == 0, str(report)


def shared_and_cyclic(x):
    a, b = Cache(), Cache()
    a.owner, b.owner = b, a   # a cycle through two objects
    a.update(x + 1, 0)
    return a, b, [a]


def test_shared_and_cyclic_objects_stay_shared():
    compiled = symc.compile(shared_and_cyclic, backend="aot_eager", fullgraph=True)
    x = torch.randn(5, 2)
    a, b, listed = compiled(x)
    assert a.owner is b and b.owner is a and listed[0] is a
    torch.testing.assert_close(a.layers[0].keys, x + 1)


class Slotted:
    __slots__ = ("value",)

    def __init__(self, value):
        self.value = value


class Finalized:
    def __init__(self, value):
        self.value = value

    def __del__(self):
        pass


class Abstract(abc.ABC):
    @abc.abstractmethod
    def run(self): ...


@pytest.mark.parametrize("cls, reason", [
    (Slotted, "__slots__"), (Finalized, "__del__"), (Abstract, "abstract"),
])
def test_objects_not_understood_are_breaks_with_a_reason(cls, reason):
    def fn(x):
        obj = cls(x) if cls is not Abstract else cls()
        return x + 1, obj

    compiled = symc.compile(fn, backend="eager")
    x = torch.randn(3)
    if cls is Abstract:
        with pytest.raises(TypeError):
            compiled(x)
    else:
        torch.testing.assert_close(compiled(x)[0], x + 1)
    report = symc.explain(compiled)
    assert any(reason in b.reason for b in report.breaks), [str(b) for b in report.breaks]


def reads_a_missing_attribute(x):
    cache = Cache()
    return x + getattr(cache, "missing", 1) + int(hasattr(cache, "layers"))


def test_getattr_default_and_hasattr_on_a_tracked_object():
    compiled = symc.compile(reads_a_missing_attribute, backend="eager", fullgraph=True)
    x = torch.randn(4)
    torch.testing.assert_close(compiled(x), reads_a_missing_attribute(x))


LAST_CACHE = None


def store_in_global(x):
    global LAST_CACHE
    LAST_CACHE = Cache(owner="global")
    LAST_CACHE.update(x * 3, 0)
    return LAST_CACHE.layers[0].keys + 1


@pytest.mark.parametrize("backend", BACKENDS)
def test_object_stored_in_a_global_is_rebuilt_there(backend):
    global LAST_CACHE
    compiled = symc.compile(store_in_global, backend=backend, fullgraph=True)
    for n in SIZES:
        x = torch.randn(n, 2)
        LAST_CACHE = None
        torch.testing.assert_close(compiled(x), x * 3 + 1)
        assert type(LAST_CACHE) is Cache and LAST_CACHE.owner == "global"
        torch.testing.assert_close(LAST_CACHE.layers[0].keys, x * 3)
    assert symc.explain(compiled).graph_breaks == 0


def break_after_building(x):
    cache = Cache()
    cache.update(x + 1, 0)
    print("a break with the cache live")   # resumes with the cache rebuilt
    return cache.layers[0].keys.sum(-1) * len(cache.layers) + cache.updates


def test_object_live_at_a_break_is_rebuilt_for_the_resumed_code(capsys):
    # The resumed function gets the rebuilt cache as an input object, whose tensors are read
    # as attributes (static sizes, like parameters): one size, called twice.
    compiled = symc.compile(break_after_building, backend="aot_eager")
    for n in (3, 3):
        x = torch.randn(n, 2)
        torch.testing.assert_close(compiled(x), break_after_building(x))
    report = symc.explain(compiled)
    assert report.graph_breaks == 1 and report.breaks[0].resumed_in, str(report)


class Point:
    def __init__(self, x, y):
        super().__init__()
        self.x, self.y = x, y


@dataclasses.dataclass(frozen=True)
class Frozen:
    scale: float
    shift: torch.Tensor

    def __post_init__(self):
        object.__setattr__(self, "ready", True)


def compares_and_reads_class(x):
    p, q = Point(x, 1), Point(x, 2)
    f = Frozen(2.0, x + 1)
    same = (p == p) + (p != q) + (p == q) + (p.__class__ is Point) + f.ready
    return x * f.scale + f.shift * same, f


@pytest.mark.parametrize("backend", BACKENDS)
def test_identity_equality_class_attribute_and_frozen_dataclass(backend):
    compiled = symc.compile(compares_and_reads_class, backend=backend, fullgraph=True)
    for n in SIZES:
        x = torch.randn(n, requires_grad=True)
        got, frozen = compiled(x)
        want, want_frozen = compares_and_reads_class(x)
        torch.testing.assert_close(got, want)
        assert frozen.ready and frozen.scale == 2.0 and type(frozen) is Frozen
        torch.testing.assert_close(frozen.shift, want_frozen.shift)
        torch.testing.assert_close(torch.autograd.grad(got.sum(), x)[0],
                                   torch.autograd.grad(want.sum(), x)[0])


class Lazy:
    def __init__(self, ready):
        self.ready = ready

    @property
    def value(self):
        if not self.ready:
            raise AttributeError("not ready")
        return 5

    def __getattr__(self, name):
        if name == "dynamic":
            return 7
        raise AttributeError(name)


def probes_attributes(x):
    on, off = Lazy(True), Lazy(False)
    found = [hasattr(on, "value"), hasattr(off, "value"), hasattr(on, "dynamic"),
             hasattr(on, "other"), hasattr(on, "ready")]
    return x + sum(found) + on.dynamic + getattr(off, "value", 10) + getattr(on, "nope", 20)


def test_hasattr_runs_properties_and_getattr_like_python():
    compiled = symc.compile(probes_attributes, backend="eager", fullgraph=True)
    x = torch.randn(3)
    torch.testing.assert_close(compiled(x), probes_attributes(x))


def _raises(x):
    raise ValueError("caught by the caller")


def catches_a_raise(x):
    try:
        _raises(x)
    except ValueError:
        return x - 1
    return x + 1


def test_a_raise_caught_by_a_try_block_stays_a_break():
    compiled = symc.compile(catches_a_raise, backend="eager")
    x = torch.randn(3)
    torch.testing.assert_close(compiled(x), x - 1)   # eager's handler ran
    report = symc.explain(compiled)
    assert any("inside a try block" in b.reason for b in report.breaks), str(report)
