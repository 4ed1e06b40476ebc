"""Identical kernels compiled once (runtime/kernel_dedupe.py): groups whose kernels differ only
in names share one compiled kernel, in Triton (interpreter here) and in C++; results unchanged.
"""

from tests.device import DEVICE, generator, interpret_triton

interpret_triton()

import pytest  # noqa: E402
import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402
from inductor_graphs import decomposed, prims_graph  # noqa: E402

from inductor.codegen.triton_configs import use_table  # noqa: E402
from inductor.compile import compile_graph  # noqa: E402
from inductor.runtime import kernel_dedupe  # noqa: E402
from inductor.runtime.kernel_dedupe import canonical_text  # noqa: E402
from inductor.runtime.triton_launch import COUNTERS, reset_counters  # noqa: E402

pytestmark = pytest.mark.usefixtures("default_device")

LAYERS = 3


def stacked(x, w, b):
    """LAYERS identical blocks gelu(x @ w + b); the matmul (an extern) splits the groups."""
    for _ in range(LAYERS):
        x = decomposed(F.gelu, decomposed(torch.add, decomposed(torch.matmul, x, w), b))
    return decomposed(torch.softmax, x, -1)


def reference(x, w, b):
    for _ in range(LAYERS):
        x = F.gelu(x @ w + b)
    return torch.softmax(x, -1)


def compiled_stack(backend: str):
    graph, env, _ = prims_graph(stacked, [("a", 6), (6, 6), (6,)], device=DEVICE)
    with use_table("tiny"):
        return compile_graph(graph, env, device_backend=backend)


@pytest.mark.parametrize("backend", ["triton", "cpp"])
def test_identical_layers_compile_one_kernel(backend):
    if backend == "cpp" and DEVICE != "cpu":
        pytest.skip("the C++ backend runs on CPU tensors")
    kernel_dedupe.reset()
    reset_counters()
    compiled = compiled_stack(backend)
    # LAYERS pointwise groups (one per block, the last one fused into the softmax) ...
    assert compiled.kernels >= LAYERS
    # ... of which the first LAYERS - 1 are the same kernel up to names
    assert compiled.distinct_kernels == compiled.kernels - (LAYERS - 2)
    assert kernel_dedupe.STATS[f"{backend}_distinct"] == compiled.distinct_kernels
    assert "compiled once" in compiled.kernel_source or "the same function as" in \
        compiled.kernel_source
    for n in (1, 2, 7, 33):
        gen = generator(n)
        x = torch.randn(n, 6, generator=gen)
        w = torch.randn(6, 6, generator=gen) / 3
        b = torch.randn(6, generator=gen)
        (got,) = compiled(x, w, b)
        torch.testing.assert_close(got, reference(x, w, b), atol=2e-5, rtol=1e-4)
    if backend == "triton":
        # variants are jitted per distinct kernel, never per group
        levels = COUNTERS["variants"]
        assert 0 < levels <= 3 * 2 * compiled.distinct_kernels


def test_a_second_compilation_of_the_same_graph_compiles_nothing_new():
    kernel_dedupe.reset()
    first = compiled_stack("triton")
    before = kernel_dedupe.STATS["triton_distinct"]
    second = compiled_stack("triton")
    assert kernel_dedupe.STATS["triton_distinct"] == before
    assert second.distinct_kernels == first.distinct_kernels
    x, w, b = torch.randn(5, 6), torch.randn(6, 6) / 3, torch.randn(6)
    torch.testing.assert_close(second(x, w, b)[0], reference(x, w, b), atol=2e-5, rtol=1e-4)


def test_canonical_text_renames_whole_words_by_position():
    a = canonical_text("def k1_pw_n3_pointwise(buf3_ptr, buf30_ptr, s0):\n  buf3_ptr + s0",
                       {"k1_pw_n3": "KERNEL"}, ("buf3_ptr", "buf30_ptr", "s0"))
    b = canonical_text("def k9_pw_n7_pointwise(buf7_ptr, buf8_ptr, s1):\n  buf7_ptr + s1",
                       {"k9_pw_n7": "KERNEL"}, ("buf7_ptr", "buf8_ptr", "s1"))
    assert a == b == "def KERNEL_pointwise(_a0, _a1, _a2):\n  _a0 + _a2"
    # a different argument in the body is a different kernel
    c = canonical_text("def k9_pw_n7_pointwise(buf7_ptr, buf8_ptr, s1):\n  buf8_ptr + s1",
                       {"k9_pw_n7": "KERNEL"}, ("buf7_ptr", "buf8_ptr", "s1"))
    assert c != a
