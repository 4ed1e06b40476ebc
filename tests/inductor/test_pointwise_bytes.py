"""Bytes moved by pointwise kernels: what is recomputed, what is stored, in which dtype.

The graphs are shaped like a bf16 GPT block's backward (autocast's casts spelled out): gelu's
`erf(h/sqrt2) + 1` read by two kernels, a gradient rounded to bf16 and widened back to f32 for
the bias sum, and cast to bf16 again for the two matmuls that read it. Each is compiled with
symbolic sizes, its buffers and kernels are counted, and it runs at several sizes against the
prims reference (the same ops evaluated by torch).

    before: gelu backward in 3 pointwise kernels around an f32 [rows, C] buffer, its result
            stored f32 then copied twice to bf16; now 2 kernels, no f32 [rows, C] buffer
"""

from __future__ import annotations

import pytest
import torch
from inductor_graphs import prims_graph

from inductor import compile_graph
from inductor.codegen.common import KernelGroup
from prims import ops, run_reference

BF16, F32 = torch.bfloat16, torch.float32
SIZES = (1, 2, 7, 13)
INV_SQRT2 = 0.7071067811865476
INV_SQRT_2PI = 0.3989422804014327


def kernels(cg) -> list:
    return [s for s in cg.steps if isinstance(s, KernelGroup)]


def pointwise_kernels(cg) -> list:
    return [s.name for s in kernels(cg) if not s.rranges]


def reductions(cg) -> list:
    return [s.name for s in kernels(cg) if s.rranges]


def readers(cg, name) -> list:
    return [s.name for s in kernels(cg) if name in s.inputs]


def written(cg, dtype, ndim) -> list:
    """The activation-sized buffers of `dtype` and rank `ndim` the kernels write: the first
    dim is the graph's symbol (a split sum's partials, rows / 128 of them, are not)."""
    names = {n for s in kernels(cg) for n in s.outputs}
    return sorted(n for n in names if cg.buffers[n].dtype == dtype
                  and len(cg.buffers[n].layout.size) == ndim
                  and getattr(cg.buffers[n].layout.size[0], "is_Symbol", False))


def check(graph, cg, shapes, dtypes, tol):
    for n in SIZES:
        gen = torch.Generator().manual_seed(n)
        args = [torch.randn(tuple(n if s == "a" else s for s in shape), generator=gen).to(d)
                for shape, d in zip(shapes, dtypes)]
        got, want = cg(*args), run_reference(graph, args)
        assert len(got) == len(want)
        for g, w in zip(got, want, strict=True):
            assert g.dtype == w.dtype and g.shape == w.shape, f"n={n}"
            torch.testing.assert_close(g.float(), w.float(), atol=tol, rtol=tol, msg=f"n={n}")


def compiled(fn, shapes, dtypes, backend):
    graph, env, _ = prims_graph(fn, shapes, dtypes)
    return graph, compile_graph(graph, env, device_backend=backend)


# --------------------------------------------------------------------------- gelu backward
def _mlp_backward(h, w, g):
    """h: the saved pre-activation bf16[a, 8]; w: fc2's weight bf16[8, 8]; g: the gradient of
    fc2's output bf16[a, 8]. Returns fc2's weight gradient, the fc1 bias gradient and the two
    products fc1's backward makes of the pre-activation's gradient."""
    hf = ops.convert_element_type(h, F32)
    cdf = ops.add(ops.erf(ops.mul(hf, INV_SQRT2)), 1.0)  # read by gelu and by its backward
    act = ops.convert_element_type(ops.mul(ops.mul(hf, 0.5), cdf), BF16)
    dw = ops.mm(ops.permute(act, (1, 0)), g)
    dact = ops.convert_element_type(ops.mm(g, ops.permute(w, (1, 0))), F32)
    pdf = ops.mul(ops.exp(ops.mul(ops.mul(hf, hf), -0.5)), INV_SQRT_2PI)
    dh = ops.add(ops.mul(ops.mul(dact, cdf), 0.5), ops.mul(ops.mul(dact, hf), pdf))
    dhf = ops.convert_element_type(ops.convert_element_type(dh, BF16), F32)
    db = ops.sum(dhf, (0,))
    dx = ops.mm(ops.convert_element_type(dhf, BF16), w)
    dw1 = ops.mm(ops.permute(ops.convert_element_type(dhf, BF16), (1, 0)), h)
    return dw, db, dx, dw1


@pytest.mark.parametrize("backend", ["torch", "cpp"])
def test_gelu_backward_is_one_kernel_storing_no_f32_activation(backend):
    shapes, dtypes = [("a", 8), (8, 8), ("a", 8)], [BF16, BF16, BF16]
    graph, cg = compiled(_mlp_backward, shapes, dtypes, backend)
    check(graph, cg, shapes, dtypes, 2e-2)
    # erf(h/sqrt2) + 1 is recomputed by both its readers (was an f32 [a, 8] buffer), and the
    # rounded gradient is stored once, in bf16, read by the bias sum and both matmuls (was
    # an f32 buffer and a kernel writing two bf16 copies of it)
    assert written(cg, F32, 2) == [], cg.source
    assert len(written(cg, BF16, 2)) == 2, cg.source  # gelu(h) and the gradient
    # h is read by gelu(h)'s kernel and by gelu's backward (also by erf's own kernel before),
    # and the bias sum needs one more (or two: a split sum's partials and their total)
    assert len(readers(cg, "arg0")) == 2, cg.source
    assert len(kernels(cg)) == 3, cg.source


# --------------------------------------------------------------------------- narrow stores
def _widened_read_twice(x, w):
    y = ops.convert_element_type(ops.convert_element_type(
        ops.mul(ops.exp(ops.convert_element_type(x, F32)), 3.0), BF16), F32)
    return ops.sum(y, (0,)), ops.mm(ops.convert_element_type(y, BF16), w)


@pytest.mark.parametrize("backend", ["torch", "cpp"])
def test_a_widened_value_is_stored_narrow_and_read_by_the_matmul_in_place(backend):
    shapes, dtypes = [("a", 8), (8, 4)], [BF16, BF16]
    graph, cg = compiled(_widened_read_twice, shapes, dtypes, backend)
    check(graph, cg, shapes, dtypes, 2e-2)
    # y = f32(bf16(...)) is stored as its bf16 value; the matmul's cast back is that buffer
    assert written(cg, F32, 2) == [] and len(written(cg, BF16, 2)) == 1, cg.source
    assert len(kernels(cg)) == 2, cg.source  # y and the sum (was y in f32, its cast, the sum)


def _cast_for_two_matmuls(x, w):
    # autocast casts a gradient to bf16 once per matmul reading it: two casts, one value
    first = ops.convert_element_type(ops.mul(x, 2.0), BF16)
    second = ops.convert_element_type(ops.mul(x, 2.0), BF16)
    return ops.mm(first, w), ops.mm(ops.permute(second, (1, 0)), first)


@pytest.mark.parametrize("backend", ["torch", "cpp"])
def test_one_value_cast_twice_for_two_matmuls_is_one_buffer(backend):
    shapes, dtypes = [("a", 8), (8, 4)], [F32, BF16]
    graph, cg = compiled(_cast_for_two_matmuls, shapes, dtypes, backend)
    check(graph, cg, shapes, dtypes, 2e-2)
    assert len(written(cg, BF16, 2)) == 1, cg.source  # was three: one per extern operand
    assert len(pointwise_kernels(cg)) == 1, cg.source


def test_merged_prims_keep_apart_scalars_of_another_type_or_sign():
    from inductor.cse import duplicates

    def fn(x):
        values = (ops.add(x, 0.0), ops.add(x, -0.0), ops.mul(x, 2), ops.mul(x, 2.0),
                  ops.mul(x, 2.0))
        total = values[0]
        for v in values[1:]:
            total = ops.sub(total, v)
        return total, ops.sub(ops.sum(x, (0,)), ops.sum(x, (0,)))
    graph, _, _ = prims_graph(fn, [("a", 3)], F32)
    same = {a.name: b.name for a, b in duplicates(graph).items()}
    # the second mul(x, 2.0) only: no sign, type or reduction merges
    assert list(same.values()) == ["mul_1"] and len(same) == 1, same


def test_two_outputs_computing_one_value_stay_two_buffers():
    from inductor.cse import duplicates

    def fn(x):
        first = ops.convert_element_type(x, BF16)
        inner = ops.convert_element_type(x, BF16)  # merged into `first`: read, not returned
        return (first, ops.convert_element_type(x, BF16),
                ops.reshape(ops.mul(inner, 2.0), (3, x.shape[0])),
                ops.reshape(ops.mul(first, 2.0), (3, x.shape[0])))
    graph, env, _ = prims_graph(fn, [("a", 3)], F32)
    same = {a.name: b.name for a, b in duplicates(graph).items()}
    # inner and its mul merge; the second cast and the second reshape are outputs: kept
    assert same == {"convert_element_type_1": "convert_element_type", "mul_1": "mul"}, same
    cg = compile_graph(graph, env, device_backend="torch")
    x = torch.randn(5, 3)
    outs = cg(x)
    assert len({o.untyped_storage().data_ptr() for o in outs}) == 4
    outs[0].add_(1)
    torch.testing.assert_close(outs[1], x.to(BF16))
    torch.testing.assert_close(outs[3], outs[2])


# --------------------------------------------------------------------------- recompute
def _shared_input_and_output(x):
    # e is read by two kernels around a matmul; recomputing it loads x, which both load anyway
    e = ops.add(ops.erf(ops.mul(ops.convert_element_type(x, F32), INV_SQRT2)), 1.0)
    m = ops.mm(ops.convert_element_type(ops.mul(e, 2.0), BF16), ops.permute(x, (1, 0)))
    return m, ops.convert_element_type(ops.mul(e, ops.convert_element_type(x, F32)), BF16)


def _costly_to_recompute(x, y, w):
    # d loads two f32 inputs per element (8 bytes) to make 4: it is stored, not recomputed
    d = ops.exp(ops.mul(ops.sin(x), ops.cos(y)))
    return ops.mm(d, w), ops.mm(ops.permute(d, (1, 0)), x)


@pytest.mark.parametrize("backend", ["torch", "cpp"])
def test_values_are_recomputed_only_when_their_loads_are_no_wider(backend):
    graph, cg = compiled(_shared_input_and_output, [("a", 8)], [BF16], backend)
    check(graph, cg, [("a", 8)], [BF16], 2e-2)
    assert written(cg, F32, 2) == [], cg.source
    shapes, dtypes = [("a", 8), ("a", 8), (8, 4)], [F32, F32, F32]
    graph, cg = compiled(_costly_to_recompute, shapes, dtypes, backend)
    check(graph, cg, shapes, dtypes, 1e-5)
    assert len(written(cg, F32, 2)) == 1, cg.source


# --------------------------------------------------------------------------- fusion
def _row_reduction_then_flat_cast(x, y, w, v):
    # a layer norm backward's shape: d over [a, 3, 8] written by the row-reduction kernel,
    # cast to bf16 as [a*3, 8] for a matmul (the cast took a kernel of its own)
    m = ops.sum(ops.mul(x, y), (2,))
    d = ops.sub(ops.mul(x, y), ops.broadcast_in_dim(m, (x.shape[0], 3, 8), (0, 1)))
    flat = ops.reshape(ops.convert_element_type(d, BF16), (x.shape[0] * 3, 8))
    return ops.mm(ops.reshape(d, (x.shape[0] * 3, 8)), w), ops.mm(flat, v)


@pytest.mark.parametrize("backend", ["torch", "cpp"])
def test_a_cast_over_a_coarser_factoring_joins_the_row_reduction(backend):
    shapes, dtypes = [("a", 3, 8), ("a", 3, 8), (8, 4), (8, 4)], [F32, F32, F32, BF16]
    graph, cg = compiled(_row_reduction_then_flat_cast, shapes, dtypes, backend)
    check(graph, cg, shapes, dtypes, 2e-2)
    assert len(reductions(cg)) == 1 and pointwise_kernels(cg) == [], cg.source
