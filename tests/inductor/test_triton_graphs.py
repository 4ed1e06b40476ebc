"""Whole prims graphs through `compile_graph(..., device_backend="triton")` on the test device.

One compilation per graph serves every size: each test runs the compiled graph at sizes 1, 2, 7
and 33 against torch, and one runs a graph over 30 sizes and checks that the number of kernel
variants stops growing after the first call (no size ever compiles anything new).
"""

from tests.device import DEVICE, generator, interpret_triton

interpret_triton()  # on CPU tensors in CI; SYMC_TEST_DEVICE=cuda compiles real Triton

import pytest  # noqa: E402
import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402
from inductor_graphs import decomposed, prims_graph  # noqa: E402

from inductor.codegen.triton_configs import use_table  # noqa: E402
from inductor.compile import compile_graph  # noqa: E402
from inductor.runtime.triton_launch import COUNTERS, reset_counters  # noqa: E402

pytestmark = pytest.mark.usefixtures("default_device")  # tensors on SYMC_TEST_DEVICE

SIZES = [1, 2, 7, 33]


def compile_triton(fn, shapes, dtypes=torch.float32, table="tiny"):
    graph, env, _ = prims_graph(fn, shapes, dtypes, device=DEVICE)
    with use_table(table):
        return compile_graph(graph, env, device_backend="triton")


CASES = {
    "gelu_bias": (lambda x, b: decomposed(F.gelu, decomposed(torch.add, x, b)), [("a", "b"), ("b",)],
                  lambda x, b: F.gelu(x + b)),
    "broadcast_mul": (lambda x, y: decomposed(torch.mul, x, y), [("a", 1), (1, "b")], lambda x, y: x * y),
    "softmax": (lambda x: decomposed(torch.softmax, x, -1), [("a", "b")],
                lambda x: torch.softmax(x, -1)),
    # A looped kernel recomputes the first softmax's values in later loops; recomputed stores
    # were attributed to the asking node, which then recomputed itself forever (RecursionError,
    # T5's relative-position bias on CUDA).
    "softmax_of_softmax_times_x": (
        lambda x: decomposed(torch.softmax, decomposed(torch.mul, decomposed(torch.softmax, x, -1),
                                                       x), -1),
        [("a", "b")], lambda x: torch.softmax(torch.softmax(x, -1) * x, -1)),
    "row_sum_and_max": (lambda x: (decomposed(torch.sum, x, 1), decomposed(torch.amax, x, 1)),
                        [("a", "b")], lambda x: (x.sum(1), x.amax(1))),
    "layer_norm": (lambda x, w, b: decomposed(F.layer_norm, x, (x.shape[-1],), w, b),
                   [("a", "b"), ("b",), ("b",)],
                   lambda x, w, b: F.layer_norm(x, (x.shape[-1],), w, b)),
    "transpose_exp": (lambda x: decomposed(torch.exp, decomposed(torch.transpose, x, 0, 1)),
                      [("a", "b")], lambda x: x.t().exp()),
    "log_softmax": (lambda x: decomposed(F.log_softmax, x, -1), [("a", "b")],
                    lambda x: F.log_softmax(x, -1)),
}


def sized_inputs(shapes, n, seed=0):
    gen = generator(seed + n)
    sizes = {"a": max(1, n // 2 + 1), "b": n}
    return [torch.randn(tuple(sizes[s] if isinstance(s, str) else s for s in shape),
                        generator=gen) for shape in shapes]


@pytest.mark.parametrize("case", sorted(CASES))
def test_graph_matches_torch_at_every_size(case):
    fn, shapes, reference = CASES[case]
    compiled = compile_triton(fn, shapes)
    for n in SIZES:
        inputs = sized_inputs(shapes, n)
        got = compiled(*inputs)
        expect = reference(*inputs)
        expect = expect if isinstance(expect, tuple) else (expect,)
        for g, e in zip(got, expect):
            torch.testing.assert_close(g, e, atol=2e-5, rtol=1e-4, msg=f"{case} at n={n}")


def test_cross_entropy_over_a_vocab():
    def fn(logits, target):
        return decomposed(F.cross_entropy, logits, target)
    graph, env, _ = prims_graph(fn, [("a", 40), ("a",)], [torch.float32, torch.int64],
                               device=DEVICE)
    with use_table("tiny"):
        compiled = compile_graph(graph, env, device_backend="triton")
    for n in SIZES:
        logits = torch.randn(n, 40)
        target = torch.randint(0, 40, (n,))
        (loss,) = compiled(logits, target)
        torch.testing.assert_close(loss, F.cross_entropy(logits, target), atol=1e-5, rtol=1e-5)


def test_one_compiled_graph_serves_thirty_sizes_without_new_variants():
    fn, shapes, reference = CASES["layer_norm"]
    reset_counters()
    compiled = compile_triton(fn, shapes)
    variants = []
    for n in range(1, 31):
        inputs = sized_inputs(shapes, n)
        (got,) = compiled(*inputs)
        torch.testing.assert_close(got, reference(*inputs), atol=2e-5, rtol=1e-4)
        variants.append(COUNTERS["variants"])
    assert variants[0] > 0
    assert variants[-1] == variants[0], f"variants grew after the first call: {variants}"
    assert COUNTERS["launches"] >= 30
