"""In-place ops, views and aliasing against eager PyTorch (issue 18, class 1 and aliasing).

Each case runs eagerly and compiled (eager, aot_eager, inductor backends) on fresh copies of the
same inputs, over several sizes with one compiled function, and compares the return value, every
input after the call (in-place writes must reach the caller's tensors) and, for cases with
`grad`, the gradients of the leaves the inputs were made from.
"""

from __future__ import annotations

from dataclasses import dataclass

import pytest
import torch
import torch.nn.functional as F

import symc

BACKENDS = ("eager", "prims", "aot_eager", "inductor")
SIZES = (5, 1, 2, 7, 11)   # the first call's hint is 5; 7 and 11 are above it


@dataclass(frozen=True)
class Case:
    name: str
    fn: object
    shapes: tuple            # per input: a shape with "n" for the varying size
    grad: bool = False       # inputs are non-leaf views of leaves that require grad

    def inputs(self, n: int, seed: int):
        gen = torch.Generator().manual_seed(seed)
        shape = [tuple(n if d == "n" else d for d in s) for s in self.shapes]
        leaves = [torch.randn(s, generator=gen, dtype=torch.float64).float() for s in shape]
        return leaves


def _sub_(a, b):
    a.sub_(b)
    return a * 2


def _copy_broadcast(a, b):
    a.copy_(b)
    return a + 1


def _select_fill(a):
    a.select(1, 2).fill_(0)
    return a + 1


def _slice_mul(a):
    a[1:].mul_(3)
    return a.sum(0)


def _ellipsis_slice_imul(x):
    h = x * 1
    h[..., :3] *= 2
    return h


def _negative_slice_isub(x):
    h = x * 1
    h[:, -2:] -= 1
    return h


def _tanh_(x):
    h = x * 1
    torch.tanh_(h)
    return h + x


def _leaky_relu_inplace(x):
    h = x * 1
    F.leaky_relu(h, inplace=True)
    return h + x


def _relu_inplace_module_style(x):
    h = x * 2
    F.relu(h, inplace=True)
    return h * x


def _view_seen_after_base_write(x):
    h = x * 1
    v = h[:, 1]
    h.mul_(2)            # v must see the write
    return v + 0


def _narrow_of_input(a):
    torch.narrow(a, 0, 0, 1).add_(10)
    return a * 1


def _transpose_write(a):
    a.t()[0].zero_()     # column 0 of `a`
    return a.sum()


def _view_reshape_write(a):
    a.view(-1)[:2].fill_(7)
    return a + 0


def _setitem_on_view(x):
    h = x + 0
    row = h[1:]
    row[:, 0] = 5.0
    return h


def _chained_views(x):
    h = x * 1
    v = h[1:]            # rows stay non-empty: an empty slice's backward crashes inductor
    w = v[:, :2]         # (tests/symc/test_mutation.py::test_empty_slice_backward, xfail)
    w.add_(1)
    return h, v, w


def _no_grad_write(x):
    h = x * 3
    with torch.no_grad():
        h[:, 0].mul_(0)
    return h


def _split_item_write(a):
    a.split(2)[1].zero_()
    return a + 1


def _multi_dim_slice_write(x):
    h = x * 1
    h[1:, :2] *= 2
    h[-1, -1] = 3.0
    return h


def _strided_slice_write(x):
    h = x * 1
    h[1::2, ::2] *= 3
    h[:, ::3].neg_()
    return h


def _clamp_(a):
    a.clamp_(-0.5, 0.5)
    return a


CASES = [
    Case("sub_ on input", _sub_, (("n", 4), ("n", 4))),
    Case("broadcasting copy_ into input", _copy_broadcast, (("n", 4), (4,))),
    Case("select().fill_ on input", _select_fill, (("n", 4),)),
    Case("slice mul_ on input", _slice_mul, (("n", 4),)),
    Case("h[..., :3] *= 2", _ellipsis_slice_imul, (("n", 4),), grad=True),
    Case("h[:, -2:] -= 1", _negative_slice_isub, (("n", 4),), grad=True),
    Case("torch.tanh_", _tanh_, (("n", 4),), grad=True),
    Case("leaky_relu(inplace=True)", _leaky_relu_inplace, (("n", 4),), grad=True),
    Case("relu(inplace=True)", _relu_inplace_module_style, (("n", 3),), grad=True),
    Case("view sees a later write to its base", _view_seen_after_base_write, (("n", 4),),
         grad=True),
    Case("torch.narrow(input).add_", _narrow_of_input, (("n", 3),)),
    Case("a.t()[0].zero_()", _transpose_write, ((3, "n"),)),
    Case("a.view(-1)[:2].fill_", _view_reshape_write, (("n", 3),)),
    Case("setitem on a view", _setitem_on_view, (("n", 3),), grad=True),
    Case("write through a view of a view", _chained_views, ((4, "n"),), grad=True),
    Case("in-place under no_grad", _no_grad_write, (("n", 4),), grad=True),
    Case("clamp_ on input", _clamp_, (("n", 4),)),
    Case("strided slices written", _strided_slice_write, ((4, "n"),), grad=True),
    Case("split()[1].zero_() on input", _split_item_write, ((4, "n"),)),
    Case("h[1:, :2] *= 2; h[-1, -1] = 3", _multi_dim_slice_write, ((4, "n"),), grad=True),
]


def _call(fn, leaves, grad: bool):
    """Inputs as the function sees them: clones (so each run owns its tensors), or, with grad,
    non-leaf tensors computed from fresh leaves that require grad."""
    if grad:
        roots = [t.clone().requires_grad_(True) for t in leaves]
        args = [r * 1 for r in roots]
    else:
        roots, args = [], [t.clone() for t in leaves]
    out = fn(*args)
    return roots, args, out


def _flat(out):
    return list(out) if isinstance(out, tuple) else [out]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_mutation_matches_eager(case: Case, backend: str):
    compiled = symc.compile(case.fn, backend=backend)
    for i, n in enumerate(SIZES):
        leaves = case.inputs(n, seed=i)
        e_roots, e_args, e_out = _call(case.fn, leaves, case.grad)
        c_roots, c_args, c_out = _call(compiled, leaves, case.grad)
        where = f"{case.name} [{backend}] n={n}"
        for e, c in zip(_flat(e_out), _flat(c_out), strict=True):
            torch.testing.assert_close(c, e, msg=lambda m: f"output: {where}: {m}")
        for e, c in zip(e_args, c_args, strict=True):
            torch.testing.assert_close(c, e, msg=lambda m: f"input after call: {where}: {m}")
        if case.grad:
            weights = [torch.randn(o.shape) for o in _flat(e_out)]
            sum((o * w).sum() for o, w in zip(_flat(e_out), weights)).backward()
            sum((o * w).sum() for o, w in zip(_flat(c_out), weights)).backward()
            for e, c in zip(e_roots, c_roots, strict=True):
                torch.testing.assert_close(c.grad, e.grad, msg=lambda m: f"grad: {where}: {m}")
    assert not compiled.breaks, f"{case.name}: unexpected graph break {compiled.breaks}"
    assert compiled.compiles <= 2, f"{case.name}: {compiled.compiles} compilations"


# ---------------------------------------------------------------------- autograd edge cases
@pytest.mark.parametrize("backend", BACKENDS)
def test_in_place_on_leaf_that_requires_grad_raises_like_eager(backend):
    def fn(a):
        a.mul_(2)
        return a

    leaf = torch.randn(3, requires_grad=True)
    with pytest.raises(RuntimeError, match="leaf Variable that requires grad"):
        fn(leaf)
    compiled = symc.compile(fn, backend=backend)
    with pytest.raises(RuntimeError, match="leaf Variable that requires grad"):
        compiled(leaf)
    assert torch.equal(leaf.detach(), leaf.detach())  # untouched, still usable
    with torch.no_grad():   # allowed under no_grad, as in eager
        before = leaf.detach().clone()
        compiled(leaf)
        torch.testing.assert_close(leaf.detach(), before * 2)


@pytest.mark.parametrize("backend", BACKENDS)
def test_in_place_on_non_leaf_input_carries_gradient_to_later_uses(backend):
    def fn(a, w):
        a.mul_(w)
        return a.sum()

    compiled = symc.compile(fn, backend=backend)
    for n in (4, 9):
        grads = []
        for f in (fn, compiled):
            x = torch.randn(n, 3, generator=torch.Generator().manual_seed(n)).requires_grad_()
            w = torch.randn(3, generator=torch.Generator().manual_seed(1)).requires_grad_()
            a = x * 1
            f(a, w)
            (a * a).sum().backward()   # `a` was written in place: its history includes mul_
            grads.append((x.grad, w.grad))
        torch.testing.assert_close(grads[1], grads[0])


# ---------------------------------------------------------------------- aliasing
@pytest.mark.parametrize("backend", BACKENDS)
def test_same_tensor_twice_with_one_mutated(backend):
    def fn(a, b):
        a.mul_(2)
        return a + b

    compiled = symc.compile(fn, backend=backend)
    x, y = torch.ones(3), torch.ones(3)
    torch.testing.assert_close(compiled(x, y), torch.full((3,), 3.0))   # distinct: compiled
    t = torch.ones(3)
    torch.testing.assert_close(compiled(t, t), torch.full((3,), 4.0))   # eager gives 4
    torch.testing.assert_close(t, torch.full((3,), 2.0))
    assert any("shares memory" in b.reason for b in compiled.breaks), compiled.breaks
    u_e, u_c = torch.ones(6), torch.ones(6)
    torch.testing.assert_close(compiled(u_c[:3], u_c[1:4]), fn(u_e[:3], u_e[1:4]))
    torch.testing.assert_close(u_c, u_e)
    x, y = torch.ones(5), torch.ones(5)   # distinct again: still served compiled
    torch.testing.assert_close(compiled(x, y), torch.full((5,), 3.0))


@pytest.mark.parametrize("backend", BACKENDS)
def test_overlapping_views_with_one_mutated(backend):
    def fn(a, b):
        a.add_(1)
        return b * 1

    for n in (4, 7):
        base_e, base_c = torch.zeros(n + 1), torch.zeros(n + 1)
        expected = fn(base_e[:n], base_e[1:])
        got = symc.compile(fn, backend=backend)(base_c[:n], base_c[1:])
        torch.testing.assert_close(got, expected)
        torch.testing.assert_close(base_c, base_e)


@pytest.mark.parametrize("backend", BACKENDS)
def test_output_view_of_input_is_a_view(backend):
    def fn(x):
        return x[1:]

    compiled = symc.compile(fn, backend=backend)
    for n in (4, 2, 9):
        x = torch.ones(n)
        y = compiled(x)
        y.fill_(5)
        expected = torch.ones(n)
        expected[1:] = 5
        torch.testing.assert_close(x, expected)


@pytest.mark.parametrize("backend", BACKENDS)
def test_outputs_that_alias_each_other_stay_aliased(backend):
    def fn(x):
        h = x * 2
        return h, h[:, 0], h.t()

    compiled = symc.compile(fn, backend=backend)
    for n in (3, 6):
        h, col, ht = compiled(torch.randn(n, 4))
        col.fill_(-1)
        assert torch.all(h[:, 0] == -1) and torch.all(ht[0] == -1)


@pytest.mark.parametrize("backend", BACKENDS)
def test_output_view_of_input_gets_gradient(backend):
    def fn(x):
        return x[1:].t()

    compiled = symc.compile(fn, backend=backend)
    for n in (4, 7):
        grads = []
        for f in (fn, compiled):
            x = torch.randn(n, 3, generator=torch.Generator().manual_seed(n)).requires_grad_()
            (f(x) * torch.arange(3 * (n - 1)).reshape(3, n - 1)).sum().backward()
            grads.append(x.grad)
        torch.testing.assert_close(grads[1], grads[0])


# ---------------------------------------------------------------------- breaks, not guesses
def test_write_through_expand_breaks_with_a_reason():
    def fn(x, y):
        e = y.expand(x.shape[0], 3)
        e.add_(x)
        return e

    compiled = symc.compile(fn, backend="eager")
    with pytest.raises(RuntimeError):
        compiled(torch.randn(4, 3), torch.randn(1, 3))   # eager raises too (overlapping write)


def test_advanced_index_result_is_not_a_view():
    def fn(x, i):
        x[i].mul_(0)       # a copy in eager: x is unchanged
        return x + 1

    for backend in BACKENDS:
        compiled = symc.compile(fn, backend=backend)
        x = torch.randn(5, 3)
        torch.testing.assert_close(compiled(x.clone(), torch.tensor([0, 2])), x + 1)


# ---------------------------------------------------------------------- modules, breaks, detach
class _Counter(torch.nn.Module):
    """Buffer updates under no_grad, an in-place activation module, a parameter scaled in place."""

    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(4, 4)
        self.act = torch.nn.ReLU(inplace=True)
        self.register_buffer("count", torch.zeros(4))

    def forward(self, x):
        h = self.act(self.lin(x))
        with torch.no_grad():
            self.count += h.sum(0)
            self.lin.weight.mul_(0.5)
        return h * 2


@pytest.mark.parametrize("backend", BACKENDS)
def test_module_buffer_and_parameter_writes_match_eager(backend):
    torch.manual_seed(0)
    eager, mine = _Counter(), _Counter()
    mine.load_state_dict(eager.state_dict())
    compiled = symc.compile(mine, backend=backend)
    for n in (3, 1, 7):
        x = torch.randn(n, 4)
        e, c = eager(x), compiled(x)
        e.sum().backward()
        c.sum().backward()
        torch.testing.assert_close(c, e)
        for (name, a), (_, b) in zip(eager.state_dict().items(), mine.state_dict().items()):
            torch.testing.assert_close(b, a, msg=lambda m, name=name: f"{name}: {m}")
        torch.testing.assert_close(mine.lin.weight.grad, eager.lin.weight.grad)
    assert symc.explain(compiled).graph_breaks == 0


@pytest.mark.parametrize("backend", BACKENDS)
def test_view_live_across_a_graph_break_still_aliases_its_input(backend):
    def fn(x):
        v = x[1:]
        s = v.sum().item()      # a break: the rest runs in a resume function
        v.mul_(2)
        return x + s

    compiled = symc.compile(fn, backend=backend)
    for n in (4, 6):
        x_e, x_c = torch.arange(float(n)), torch.arange(float(n))
        torch.testing.assert_close(compiled(x_c), fn(x_e))
        torch.testing.assert_close(x_c, x_e)


@pytest.mark.parametrize("backend", BACKENDS)
def test_write_through_detach_reaches_a_leaf_without_autograd(backend):
    def fn(w, x):
        w.detach().mul_(2)      # allowed on a leaf: autograd does not see it
        return (w * x).sum()

    compiled = symc.compile(fn, backend=backend)
    results = []
    for f in (fn, compiled):
        w = torch.ones(3, requires_grad=True)
        x = torch.arange(3.0)
        f(w, x).backward()
        results.append((w.detach().clone(), w.grad))
    torch.testing.assert_close(results[1], results[0])


def test_empty_slice_backward():
    """Not a mutation bug, found here: the backward of an empty slice (`x[1:]` at size 1)
    crashed (SIGSEGV) inside the inductor C++ kernel. Runs in a subprocess to keep pytest up."""
    import subprocess
    import sys
    import textwrap

    code = textwrap.dedent("""
        import torch, symc
        f = symc.compile(lambda x: (x * 1)[1:][:, 1:] * 2, backend="inductor")
        for n in (5, 1):
            x = torch.randn(n, 4, requires_grad=True)
            f(x).sum().backward()
            assert torch.equal(x.grad[1:, 1:], torch.full((n - 1, 3), 2.0))
    """)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, timeout=300)
    assert done.returncode == 0, (done.returncode, done.stderr.decode()[-3000:])


@pytest.mark.parametrize("backend", BACKENDS)
def test_input_returned_as_is_is_the_callers_tensor(backend):
    def fn(x, y):
        return x, x + y

    compiled = symc.compile(fn, backend=backend)
    for n in (3, 6):
        x = torch.ones(n)
        out, _ = compiled(x, torch.ones(n))
        assert out is x


@pytest.mark.xfail(strict=True, reason="input layout is not modelled for reshape: reshape() of a "
                   "transposed input counts as a view (eager: a copy), so the write reaches the "
                   "input (a contiguity guard here broke the output-view path on inductor)")
@pytest.mark.parametrize("backend", ["aot_eager", "inductor"])
def test_reshape_write_on_non_contiguous_input(backend):
    """reshape() of a transposed input is a copy in eager: a write through it must not reach the
    input (capture took every input as contiguous); contiguity is guarded, so both kinds of
    input get their own entry."""
    def fn(x):
        x.reshape(-1).mul_(2)
        return x + 0

    compiled = symc.compile(fn, backend=backend)
    for x in (torch.randn(4, 3).t(), torch.randn(3, 4), torch.randn(6, 5).t()):
        mine, theirs = x.clone().t().contiguous().t() if not x.is_contiguous() else x.clone(), \
            x.clone().t().contiguous().t() if not x.is_contiguous() else x.clone()
        torch.testing.assert_close(compiled(mine), fn(theirs))
        torch.testing.assert_close(mine, theirs)   # the input: written only when contiguous


@pytest.mark.parametrize("backend", BACKENDS)
def test_fill_of_an_input_gives_its_history_a_zero_gradient(backend):
    """Found by the differential fuzzer: after `x.fill_(v)`, eager still reaches `x`'s history
    through FillBackward (a zero gradient), where symc's graph had no edge (None)."""
    def program(x):
        x.fill_(0.5)
        return x.sum(0)

    compiled = symc.compile(program, backend=backend)
    for n in (1, 2, 5):
        mine = torch.randn(n, requires_grad=True)
        theirs = mine.detach().clone().requires_grad_()
        compiled(mine * 1).backward()
        program(theirs * 1).backward()
        assert theirs.grad is not None and mine.grad is not None
        torch.testing.assert_close(mine.grad, theirs.grad)
