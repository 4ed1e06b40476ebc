"""Kernel error flags (inductor/runtime/error_flags.py): loud, masked, and no sync on CUDA.

An embedding id past the table and a cross-entropy target past the classes still raise eager's
IndexError naming the kernel; nothing outside a buffer is read (the gather's failing lanes read
NaN, not the memory past the table). On the CPU the flag is read right after the launch; the
deferred path CUDA takes (a non-blocking copy, read at the next compiled call, at the backward
and by `symc.check_errors()`) runs here too with the CPU added to DEFERRED_DEVICE_TYPES. On the
GPU run (scripts/gpu_tests.py) the same tests run on CUDA tensors, plus one that runs a step
under `torch.cuda.set_sync_debug_mode("error")`.
"""

from tests.device import interpret_triton

interpret_triton()

import pytest  # noqa: E402
import sympy  # noqa: E402
import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402

import inductor  # noqa: E402
import symc  # noqa: E402
from inductor.codegen.triton import generate_kernel  # noqa: E402
from inductor.codegen.triton_group import GroupNode, KernelGroup  # noqa: E402
from inductor.runtime import error_flags  # noqa: E402
from prims import ops  # noqa: E402
from tests.device import DEVICE, ON_GPU, use_triton  # noqa: E402
from tests.inductor.inductor_graphs import prims_graph  # noqa: E402

pytestmark = pytest.mark.no_debug_bounds  # SYMC_DEBUG_BOUNDS reads every flag at once

s0 = sympy.Symbol("s0", integer=True, positive=True)


@pytest.fixture(autouse=True)
def _triton(monkeypatch):
    use_triton(monkeypatch)
    symc.reset()
    yield
    try:  # a flag a failed test left set must not fail the next test's first call
        symc.check_errors()
    except (IndexError, RuntimeError):
        pass


@pytest.fixture
def deferred(monkeypatch):
    """The CUDA path (flags read later) on this device too."""
    monkeypatch.setattr(error_flags, "DEFERRED_DEVICE_TYPES", {"cuda", DEVICE})


def _raises_named(exc_type, call):
    """`call()` then `symc.check_errors()` raise `exc_type`, naming a generated kernel."""
    with pytest.raises(exc_type, match=r"generated kernel k\d+_"):
        call()
        symc.check_errors()


def _embed(i, w):
    return F.embedding(i, w).sum(-1)


def _loss(logits, target):
    return F.cross_entropy(logits, target)


def test_embedding_index_out_of_range_raises_naming_the_kernel():
    w = torch.randn(5, 3, device=DEVICE)
    compiled = symc.compile(_embed)
    good = torch.tensor([0, 4], device=DEVICE)
    torch.testing.assert_close(compiled(good, w), _embed(good, w))
    for bad in ([1, 5], [-6, 0], [7]):
        _raises_named(IndexError, lambda: compiled(torch.tensor(bad, device=DEVICE), w))
    # the error was raised once and cleared: good calls go on
    torch.testing.assert_close(compiled(good, w), _embed(good, w))
    symc.check_errors()


def test_cross_entropy_target_out_of_range_raises_naming_the_kernel():
    logits = torch.randn(4, 6, device=DEVICE)
    compiled = symc.compile(_loss)
    good = torch.tensor([0, 5, 2, 1], device=DEVICE)
    torch.testing.assert_close(compiled(logits, good), _loss(logits, good))
    _raises_named(IndexError, lambda: compiled(logits, torch.tensor([0, 6, 2, 1], device=DEVICE)))
    torch.testing.assert_close(compiled(logits, good), _loss(logits, good))


def test_nothing_past_the_table_is_read():
    # the table is the first 5 rows of a tensor whose row 5 holds a sentinel: an unmasked
    # read of id 5 would return it
    storage = torch.zeros(6, 3, device=DEVICE)
    storage[5] = 1e6
    table = storage[:5]
    compiled = symc.compile(lambda i, w: F.embedding(i, w) * 1)
    compiled(torch.tensor([0, 1], device=DEVICE), table)
    with pytest.raises(IndexError):
        out = compiled(torch.tensor([5, 1], device=DEVICE), table)
        assert not (out == 1e6).any(), "read past the table"
        symc.check_errors()


def test_deferred_flag_poisons_the_failing_lanes_and_raises_at_the_next_call(deferred):
    w = torch.randn(5, 3, device=DEVICE)
    compiled = symc.compile(_embed)
    compiled(torch.tensor([0, 1], device=DEVICE), w)
    out = compiled(torch.tensor([1, 5, 2], device=DEVICE), w)  # no raise: read later
    assert torch.isnan(out[1]) and not torch.isnan(out[[0, 2]]).any()
    torch.testing.assert_close(out[[0, 2]], _embed(torch.tensor([1, 2], device=DEVICE), w))
    with pytest.raises(IndexError, match=r"generated kernel k\d+_.*reported after the launch"):
        compiled(torch.tensor([0, 1], device=DEVICE), w)
    symc.check_errors()  # raised once: nothing pending


def test_deferred_cross_entropy_loss_is_nan_until_check_errors(deferred):
    logits = torch.randn(4, 6, device=DEVICE)
    compiled = symc.compile(_loss)
    compiled(logits, torch.tensor([0, 5, 2, 1], device=DEVICE))
    loss = compiled(logits, torch.tensor([0, 6, 2, 1], device=DEVICE))
    assert torch.isnan(loss), "a bad target must never give a plausible loss"
    with pytest.raises(IndexError, match="generated kernel"):
        symc.check_errors()


def test_deferred_flag_raises_at_the_backward(deferred):
    w = torch.randn(5, 3, device=DEVICE, requires_grad=True)
    compiled = symc.compile(_embed)
    compiled(torch.tensor([0, 1], device=DEVICE), w).sum().backward()
    loss = compiled(torch.tensor([0, 9], device=DEVICE), w).sum()
    if ON_GPU:  # the check reads the copies that have landed, without waiting for them
        torch.cuda.synchronize()
    with pytest.raises(IndexError, match="generated kernel"):
        loss.backward()


def _group(name, node, dtypes, inputs, outputs):
    return KernelGroup(name, (s0,), (), (GroupNode(node),), dtypes, inputs=inputs,
                       outputs=outputs, symbol_args=(s0,))


def _gather(dtype):
    def node(ops, x, r):
        i = ops.indirect_indexing(ops.load("idx", x[0]), 7)
        ops.store("out", x[0], ops.load("table", i))
    return _group("g", node, {"idx": torch.int64, "table": dtype, "out": dtype},
                  ("idx", "table"), ("out",))


def _scatter():
    def node(ops, x, r):
        i = ops.indirect_indexing(ops.load("idx", x[0]), 7)
        ops.store("out", i, ops.load("src", x[0]))
    return _group("sc", node, {"idx": torch.int64, "src": torch.float32, "out": torch.float32},
                  ("idx", "src"), ("out",))


def _floordiv():
    def node(ops, x, r):
        ops.store("out", x[0], ops.floor_divide(ops.load("a", x[0]), ops.load("b", x[0])))
    return _group("fd", node, {"a": torch.int64, "b": torch.int64, "out": torch.int64},
                  ("a", "b"), ("out",))


@pytest.mark.parametrize("make, deferrable", [
    (lambda: _gather(torch.float32), True),   # a float read: NaN in the failing lanes
    (lambda: _gather(torch.bfloat16), True),
    (lambda: _gather(torch.int64), False),    # an integer read holds no NaN: read at once
    (_scatter, False),                        # a store through the index: nothing to poison
    (_floordiv, False),                       # integer division by zero
])
def test_which_kernels_may_be_read_later(make, deferrable):
    spec = generate_kernel(make())
    assert spec.meta["error_flag"]
    assert spec.meta["error_deferrable"] is deferrable
    if deferrable:
        assert 'float("nan")' in spec.source


def test_every_compiled_graph_checks_the_pending_flags_first():
    graph, env, _ = prims_graph(lambda x: ops.mul(x, x), [("a",)])
    lines = inductor.compile_graph(graph, env).source.splitlines()
    call = next(k for k, line in enumerate(lines) if line.startswith("def call("))
    # the deferred flags' list tested first: no call while no kernel defers its flag
    assert [line.strip() for line in lines[call + 1:call + 3]] == ["if deferred:",
                                                                 "check_pending()"]


@pytest.mark.skipif(not ON_GPU, reason="a CUDA sync only exists on the GPU (the GPU run)")
def test_cuda_step_with_a_gather_never_syncs():
    w = torch.randn(50, 8, device=DEVICE, requires_grad=True)
    head = torch.randn(8, 50, device=DEVICE)

    def step(i, t):
        return F.cross_entropy(F.embedding(i, w) @ head, t)
    compiled = symc.compile(step)
    i, t = torch.randint(0, 50, (2, 16), device=DEVICE), torch.randint(0, 50, (2, 16),
                                                                       device=DEVICE)
    for _ in range(2):  # compile and plan the launches
        compiled(i.view(-1), t.view(-1)).backward()
    torch.cuda.synchronize()
    torch.cuda.set_sync_debug_mode("error")
    try:
        for _ in range(3):
            compiled(i.view(-1), t.view(-1)).backward()
    finally:
        torch.cuda.set_sync_debug_mode(0)
    bad = t.view(-1).clone()
    bad[3] = 50
    _raises_named(IndexError, lambda: compiled(i.view(-1), bad).backward())


def test_an_error_never_checked_is_printed_at_exit(deferred, capsys):
    w = torch.randn(5, 3, device=DEVICE)
    compiled = symc.compile(_embed)
    compiled(torch.tensor([5], device=DEVICE), w)
    error_flags.report_at_exit()  # what atexit runs
    err = capsys.readouterr().err
    assert "never raised" in err and "IndexError" in err and "generated kernel" in err
    symc.check_errors()  # reported once: nothing pending
