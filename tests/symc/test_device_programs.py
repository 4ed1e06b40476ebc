"""Programs that went wrong on CUDA (issue 27), run on the test device (tests/device.py).

In CI they run on CPU tensors with the Triton kernels interpreted (`SYMC_CPU_BACKEND=triton`,
TRITON_INTERPRET=1); in the GPU run (`make test-gpu`) on CUDA tensors through real Triton.
Oracles: the same program run eagerly.
"""

from __future__ import annotations

import math

from tests.device import DEVICE, ON_GPU, interpret_triton, use_triton

interpret_triton()

import pytest  # noqa: E402
import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402

import symc  # noqa: E402

BACKENDS = ["eager", "prims", "aot_eager", "inductor"]


@pytest.fixture
def triton(monkeypatch):
    use_triton(monkeypatch)


@pytest.fixture
def default_device_of_test():
    """`torch.set_default_device(DEVICE)` for the test (inputs built without a device too)."""
    previous = torch.get_default_device()
    torch.set_default_device(DEVICE)
    yield DEVICE
    torch.set_default_device(previous)


# -- 1. KV-cache decode: the cache starts empty and grows by one position a step ----------------
class Decoder(torch.nn.Module):
    def __init__(self, d=16):
        super().__init__()
        self.q, self.k, self.v = (torch.nn.Linear(d, d) for _ in range(3))

    def forward(self, x, k_cache, v_cache):
        k = torch.cat([k_cache, self.k(x)], 1)
        v = torch.cat([v_cache, self.v(x)], 1)
        att = torch.softmax(self.q(x) @ k.transpose(1, 2) / 4.0, -1)
        return att @ v, k, v


@pytest.mark.parametrize("backend", BACKENDS)
def test_kv_cache_growing_from_length_zero_matches_eager(backend, triton):
    torch.manual_seed(0)
    model = Decoder().to(DEVICE)
    compiled = symc.compile(model, backend=backend)
    k = v = k_ref = v_ref = torch.zeros(2, 0, 16, device=DEVICE)
    steps = 10 if ON_GPU else 4  # 0, 1, then the general entry (4 sizes under the interpreter)
    with torch.no_grad():
        for step in range(steps):
            x = torch.randn(2, 1, 16, device=DEVICE)
            out, k, v = compiled(x, k, v)
            ref, k_ref, v_ref = model(x, k_ref, v_ref)
            torch.testing.assert_close(out, ref, msg=f"{backend}: step {step}")
            torch.testing.assert_close(k, k_ref)
            torch.testing.assert_close(v, v_ref)
    assert k.shape == (2, steps, 16)


# -- 2. empty tensors: tile, pad and cat of a tensor with a zero-size dimension --------------------
EMPTY_PROGRAMS = {
    "tile": (lambda x: x.tile((2, 3)) + 1, (0, 3)),
    "repeat_then_sum": (lambda x: x.repeat(3, 1).sum(0) + 1, (0, 5)),
    "pad": (lambda x: F.pad(x, (1, 2)) * 2, (0, 3)),
    "pad_empty_rows": (lambda x: F.pad(x, (0, 0, 1, 1), value=3.0) + 1, (0, 4)),
    "cat_empty_first": (lambda x: torch.cat([x[:, :0], x * 2], 1) + 1, (3, 5)),
    "reshape_empty": (lambda x: x.reshape(-1, 3).sum(1), (0, 6)),
}


@pytest.mark.parametrize("backend", ["aot_eager", "inductor"])
@pytest.mark.parametrize("name", sorted(EMPTY_PROGRAMS))
def test_programs_over_empty_tensors_match_eager(name, backend, triton):
    fn, shape = EMPTY_PROGRAMS[name]
    compiled = symc.compile(fn, backend=backend)
    x = torch.randn(shape, device=DEVICE)
    torch.testing.assert_close(compiled(x), fn(x))
    bigger = (shape[0], shape[1] + 2)  # the zero stays specialised, the other size does not
    x = torch.randn(bigger, device=DEVICE)
    torch.testing.assert_close(compiled(x), fn(x))


# -- 4. the default device: factory calls inside the compiled function follow it -----------------
def _factories(x):
    zeros = torch.zeros(x.shape) + x
    ramp = torch.arange(x.shape[1]) * 1.0 + x
    target = torch.zeros(x.shape[0], dtype=torch.long)
    return zeros, ramp, torch.ones(3), F.cross_entropy(x, target)


@pytest.mark.parametrize("backend", BACKENDS)
def test_factory_calls_follow_the_default_device(backend, triton, default_device_of_test):
    compiled = symc.compile(_factories, backend=backend)
    for n in (3, 7):
        x = torch.randn(n, 5)
        got, expect = compiled(x), _factories(x)
        for g, e in zip(got, expect):
            assert g.device == e.device, f"{backend}: {g.device} != {e.device}"
            torch.testing.assert_close(g, e)


@pytest.mark.parametrize("backend", ["prims", "aot_eager"])
def test_captured_factory_meta_takes_the_default_device(backend):
    """On CPU too: under `set_default_device("meta")` the prims graph's factories are on meta
    (before, they were made on the CPU and the reference run failed on mixed devices)."""
    compiled = symc.compile(_factories, backend=backend)
    previous = torch.get_default_device()
    torch.set_default_device("meta")
    try:
        got = compiled(torch.randn(4, 5))
    finally:
        torch.set_default_device(previous)
    assert [g.device.type for g in got] == ["meta"] * 4


def test_entry_is_guarded_on_the_default_device():
    def fn(x):
        return torch.zeros(x.shape[0]), x + 1

    compiled = symc.compile(fn, backend="aot_eager")
    x = torch.randn(3, device="cpu")
    previous = torch.get_default_device()
    torch.set_default_device("meta")
    try:
        assert compiled(x)[0].device.type == "meta"
    finally:
        torch.set_default_device(previous)
    torch.set_default_device("cpu")
    try:
        assert compiled(x)[0].device.type == "cpu"
    finally:
        torch.set_default_device(previous)
    report = symc.explain(compiled)
    assert report.compiles == 2 and report.recompiles == 1, str(report)
    assert "get_default_device" in " ".join(report.recompile_reasons), report.recompile_reasons


def test_device_derived_from_inputs_ignores_the_default():
    """`zeros_like(x)` is made where x is, whatever the default device."""
    def fn(x):
        return torch.zeros_like(x) + x, x.new_ones(2)

    compiled = symc.compile(fn, backend="aot_eager")
    previous = torch.get_default_device()
    torch.set_default_device("meta")
    try:
        got = compiled(torch.randn(3, device="cpu"))
    finally:
        torch.set_default_device(previous)
    assert [g.device.type for g in got] == ["cpu", "cpu"]


# -- 5. one graph, two devices: literals on the default device next to the inputs' kernels --------
def _literals(x):
    n, d = x.size(0), x.size(-1)
    return (x * math.sqrt(d) + n, torch.tensor([math.sqrt(d), n / 2]), torch.tensor([n, d]) * 2,
            torch.tensor(float(n)) + 1)


@pytest.mark.parametrize("kernels", ["cpp", "triton"])
@pytest.mark.parametrize("backend", ["prims", "aot_eager", "inductor"])
def test_literals_on_the_default_device_next_to_kernels_on_the_inputs(backend, kernels,
                                                                      monkeypatch):
    """eager puts `torch.tensor([...])` on the default device (meta here; the CPU in the GPU run,
    where it was given to a Triton kernel: "Pointer argument cannot be accessed from Triton")
    and `x * ...` on x's device: inductor's kernels run on x's device, the literals by torch on
    theirs (before, the C++ kernels wrote through meta pointers: a segmentation fault)."""
    if kernels == "triton":
        use_triton(monkeypatch)
    compiled = symc.compile(_literals, backend=backend)
    previous = torch.get_default_device()
    torch.set_default_device("meta")
    try:
        for n in (3, 1, 7):
            x = torch.randn(n, 5, device=DEVICE)
            got, want = compiled(x), _literals(x)
            for g, w in zip(got, want):
                assert (g.device, g.dtype, g.shape) == (w.device, w.dtype, w.shape), (n, g, w)
            torch.testing.assert_close(got[0], want[0])
    finally:
        torch.set_default_device(previous)
    assert symc.explain(compiled).graph_breaks == 0
