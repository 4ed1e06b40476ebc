"""The per-launch path (runtime/triton_fast_launch.py) against fake compiled binaries.

No GPU here, so the binaries Triton would return are fakes that record how they are called:
the general path launches and adds an entry, later launches reuse it with the pointers as ints,
the grid and block sizes of the size class, and the alignment of these very pointers; a launch
hook, a new size or a misaligned pointer go back through the general path. The direct call of
Triton 3.9's C launcher is checked against the installed launcher's own `__call__`.
"""

from tests.device import interpret_triton

interpret_triton()

import pytest  # noqa: E402
import torch  # noqa: E402

from inductor.codegen.triton import compile_group  # noqa: E402
from inductor.codegen.triton_configs import use_table  # noqa: E402
from inductor.runtime import triton_fast_launch as fl  # noqa: E402
from inductor.runtime.triton_launch import COUNTERS, stub_launches  # noqa: E402
from tests.inductor.test_triton_launch import pointwise, softmax_like  # noqa: E402

pytestmark = pytest.mark.no_debug_bounds


class FakeBinary:
    """A compiled variant: `run` records (grid0, function, hooks, kernel arguments)."""

    def __init__(self, name: str, log: list):
        self.function, self.packed_metadata, self.log = name, ("packed", name), log

    def run(self, g0, g1, g2, stream, function, packed, meta, enter, exit_, *args):
        assert (g1, g2, packed) == (1, 1, self.packed_metadata)
        self.log.append(("binary", g0, function, enter is not None, args))

    def launch_metadata(self, *args):
        return None


def fake_variants(kernel, log: list) -> None:
    """`kernel.variant(body, level)` returns a jit whose launch records and yields a FakeBinary."""
    binaries: dict = {}

    def variant(body, level):
        binary = binaries.setdefault((body, level), FakeBinary(f"{body}@{level}", log))

        class Jit:
            def __getitem__(self, grid):
                def launch(*args, num_warps, **constexprs):
                    log.append(("triton", grid[0], binary.function, args))
                    return binary
                return launch
        return Jit()
    kernel.launcher.variant = variant


def ptrs(*tensors):
    return tuple(t.data_ptr() for t in tensors)


def test_second_launch_calls_the_binary_with_int_pointers_and_the_plans_grid():
    log: list = []
    kernel = compile_group(pointwise("fl1"))
    fake_variants(kernel, log)
    x, y = torch.randn(37, 8), torch.empty(37, 8)
    kernel(x, y, 37)
    assert [e[0] for e in log] == ["triton"]  # the general path: Triton's own launch
    cfg = kernel.spec.configs[0]
    kernel(x, y, 37)
    kind, g0, function, hooked, args = log[-1]
    assert kind == "binary" and not hooked
    assert g0 == (37 * 8 + cfg.XBLOCK - 1) // cfg.XBLOCK
    assert function == f"{cfg.body}@1"  # aligned pointers, no align args: level 1
    assert args == (*ptrs(x, y), 37, *cfg.constexprs().values())


def test_misaligned_pointer_takes_the_generic_variant_even_after_aligned_launches():
    log: list = []
    with use_table("tiny"):
        kernel = compile_group(softmax_like("fl2"))
    fake_variants(kernel, log)
    a, mx, out = torch.randn(3, 32), torch.empty(3), torch.empty(3, 32)
    for _ in range(2):
        kernel(a, mx, out, 3, 32)
    assert log[-1][0] == "binary" and log[-1][2].endswith("@2")  # s1 % 16 == 0: level 2
    odd = torch.randn(3 * 32 + 1)[1:].view(3, 32)
    for _ in range(2):
        kernel(odd, mx, out, 3, 32)
    assert [e[0] for e in log[-2:]] == ["triton", "binary"] and log[-1][2].endswith("@0")
    assert log[-1][4][:3] == ptrs(odd, mx, out)
    kernel(a, mx, out, 3, 32)  # the aligned entry is still there
    assert log[-1][0] == "binary" and log[-1][2].endswith("@2")
    kernel(a[:, :31].contiguous(), mx, torch.empty(3, 31), 3, 31)  # new sizes: general path
    assert log[-1][0] == "triton" and log[-1][2].endswith("@1")
    picks = kernel.picks
    assert sum(picks.values()) == 6 == kernel.launches
    assert {level for _, level in picks} == {0, 1, 2}


def test_size_classes_pick_their_own_binary_per_size_tuple():
    log: list = []
    with use_table("tiny"):
        kernel = compile_group(softmax_like("fl3"))
    fake_variants(kernel, log)
    bodies = {}
    for t in (4, 4, 200, 200, 4):
        a = torch.randn(2, t)
        kernel(a, torch.empty(2), torch.empty(2, t), 2, t)
        bodies.setdefault(t, set()).add(log[-1][2].split("@")[0])
    assert bodies[4] == {"persistent"} and bodies[200] == {"looped"}
    assert [e[0] for e in log] == ["triton", "binary", "triton", "binary", "binary"]


def test_launch_hook_sends_launches_through_the_general_path():
    from triton import knobs

    log: list = []
    kernel = compile_group(pointwise("fl4"))
    fake_variants(kernel, log)
    x, y = torch.randn(5, 8), torch.empty(5, 8)
    kernel(x, y, 5)
    kernel(x, y, 5)
    assert log[-1][0] == "binary" and not log[-1][3]
    seen = []
    hooks = knobs.runtime
    chain = hooks.launch_enter_hook
    if hasattr(chain, "add"):
        chain.add(seen.append)
        undo = lambda: chain.remove(seen.append)  # noqa: E731
    else:
        hooks.launch_enter_hook = seen.append
        undo = lambda: setattr(hooks, "launch_enter_hook", None)  # noqa: E731
    try:
        kernel(x, y, 5)
    finally:
        undo()
    assert log[-1][0] == "binary" and log[-1][3]  # the hook was handed to the binary
    kernel(x, y, 5)
    assert not log[-1][3]


def test_stub_launches_run_no_binary_and_are_forgotten_after():
    log: list = []
    kernel = compile_group(pointwise("fl5"))
    fake_variants(kernel, log)
    x, y = torch.randn(6, 8), torch.empty(6, 8)
    kernel(x, y, 6)
    kernel(x, y, 6)
    before = (len(log), COUNTERS["launches"])
    with stub_launches():
        for _ in range(3):
            kernel(x, y, 6)
    assert len(log) == before[0] and COUNTERS["launches"] == before[1] + 3
    for n in (1, 2):  # the stub's entries are gone: the real binary runs again
        kernel(x, y, 6)
        assert len(log) == before[0] + n and log[-1][0] == "binary"


class NotTriton:
    def __call__(self, gridX, gridY, gridZ, stream, function, *args):
        self.launch(gridX, gridY, gridZ, stream, function, *args)


def test_unknown_launcher_shape_is_called_as_a_whole():
    assert fl.launcher_layout(NotTriton) == "run"
    assert fl.launcher_layout(type(lambda: 0)) == "run"


def test_direct_call_matches_triton_39s_own_launcher_call():
    driver = pytest.importorskip("triton.backends.nvidia.driver")
    launcher_type = driver.CudaLauncher
    if fl.launcher_layout(launcher_type) != "annotated":
        pytest.skip("this Triton's launcher is not the 3.9 shape (called through run)")
    calls = []
    run = object.__new__(launcher_type)
    run.__dict__.update(gsan_enabled=False, num_ctas=1, global_scratch_size=0,
                        global_scratch_align=1, profile_scratch_size=0,
                        profile_scratch_align=1, launch_cooperative_grid=False,
                        launch_pdl=True, arg_annotations="ann", kernel_signature="sig",
                        launch=lambda *a: calls.append(a))
    binary = FakeBinary("k", [])
    binary.run = run
    entry = fl.make_entry(binary, 7, (64,), [0], (id, 0))
    assert entry[0] == "annotated"
    scope = {"plans_get": {(5,): [None, entry]}.get, "slow": None,
             "rt": type("R", (), {"launch_enter_hook": None, "launch_exit_hook": None}),
             "Chain": type(None), "counters": {"launches": 0}}
    exec(fl.launch_source(2, 1), scope)
    x, y = torch.zeros(4), torch.zeros(4)
    scope["launch"](x, y, 5)
    from triton.runtime.driver import driver as config

    previous = config._active
    config._active = object()  # no CUDA here; the launcher's __call__ only reads it
    try:
        run(7, 1, 1, id(0), "k", ("packed", "k"), None, None, None, *ptrs(x, y), 5, 64)
    finally:
        config._active = previous
    assert len(calls) == 2 and calls[0] == calls[1]
    run.global_scratch_size = 128  # a kernel needing scratch memory goes through run
    assert fl.make_entry(binary, 7, (64,), [0], (id, 0))[0] == "run"
