"""compile_graph end to end: one compile serves many sizes, fusion of softmax / layer norm,
parallel paths, the disk cache, the printable wrapper and the backend choice."""

from __future__ import annotations

import os

import pytest
import torch
import torch.nn.functional as F

import inductor
from inductor.runtime import cpp_build
from prims import ops, run_reference
from tests.inductor.inductor_graphs import decomposed, prims_graph

SIZES = (1, 2, 7, 33, 100)


def _inputs(shapes, sizes, dtype=torch.float32, seed=0):
    gen = torch.Generator().manual_seed(seed)
    out = []
    for shape in shapes:
        real = tuple(sizes[s] if isinstance(s, str) else s for s in shape)
        out.append(torch.randn(real, generator=gen, dtype=torch.float64).to(dtype))
    return out


def _check_sizes(fn, shapes, backend="cpp", dtype=torch.float32, sizes=SIZES, tol=1e-4):
    graph, env, _ = prims_graph(fn, shapes, dtype)
    compiled = inductor.compile_graph(graph, env, device_backend=backend)
    names = sorted({s for shape in shapes for s in shape if isinstance(s, str)})
    for k, n in enumerate(sizes):
        dims = {name: n + i for i, name in enumerate(names)}
        inputs = _inputs(shapes, dims, dtype, seed=k)
        want = run_reference(graph, inputs)
        got = compiled(*inputs)
        for g, w in zip(got, want, strict=True):
            assert g.shape == w.shape, (g.shape, w.shape)
            torch.testing.assert_close(g, w, atol=tol, rtol=tol, equal_nan=True)
    return compiled


def softmax(x):
    return decomposed(torch.softmax, x, -1)


def layer_norm(x, w, b):
    return decomposed(F.layer_norm, x, x.size()[-1:], w, b)


def test_softmax_is_one_kernel_for_every_size():
    compiled = _check_sizes(softmax, [("a", "b")])
    assert compiled.kernels == 1, compiled.source


def test_layer_norm_is_one_kernel_for_every_size():
    compiled = _check_sizes(layer_norm, [("a", "b"), ("b",), ("b",)])
    assert compiled.kernels == 1, compiled.source


def test_gelu_and_chains_inline_into_one_pointwise_kernel():
    def fn(x, y):
        return decomposed(F.gelu, ops.add(ops.mul(x, 2.0), y))
    compiled = _check_sizes(fn, [("a", "b"), ("a", "b")])
    assert compiled.kernels == 1


def test_one_compile_serves_sizes_in_3d_with_permute_and_reduction():
    def fn(x):
        t = ops.permute(x, (2, 0, 1))
        return ops.sum(ops.exp(t), (0,)), ops.amax(t, (1, 2))
    _check_sizes(fn, [("a", 3, "b")])


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16, torch.float64])
def test_softmax_in_other_float_dtypes(dtype):
    tol = {torch.float64: 1e-9, torch.float16: 2e-3, torch.bfloat16: 2e-2}[dtype]
    _check_sizes(softmax, [("a", "b")], dtype=dtype, tol=tol)


def test_large_reductions_use_the_parallel_paths():
    # a full reduction (no x loop) splits r across threads; rows of 40k run rows in parallel
    def fn(x):
        flat_var, flat_mean = ops.var_mean(x, (0, 1), 1)
        return (ops.sum(x, (0, 1)), ops.argmax(ops.reshape(x, (x.shape[0] * x.shape[1],)), 0),
                flat_var, flat_mean, ops.amax(x, (1,)))
    graph, env, _ = prims_graph(fn, [("a", "b")])
    compiled = inductor.compile_graph(graph, env)
    for shape in [(3, 40001), (1, 5), (70000, 1)]:
        x = torch.randn(shape)
        for g, w in zip(compiled(x), run_reference(graph, [x]), strict=True):
            torch.testing.assert_close(g, w, atol=1e-3, rtol=1e-4)


def test_argmax_ties_pick_the_first_index_across_threads():
    graph, env, _ = prims_graph(lambda x: ops.argmax(x, 0), [("a",)])
    compiled = inductor.compile_graph(graph, env)
    x = torch.zeros(100003)
    x[5] = x[70000] = x[99999] = 1.0
    assert compiled(x)[0].item() == 5
    x[90000] = float("nan")
    assert compiled(x)[0].item() == 90000


def test_wrapper_source_is_printable_python_reading_sizes_from_inputs():
    compiled = _check_sizes(softmax, [("a", "b")], sizes=(3,))
    text = compiled.source
    assert "def call(in0):" in text and "s0 = arg0.shape[0]" in text
    assert 'extern "C" void' in text and "#pragma omp parallel for" in text


def test_compiling_twice_hits_the_disk_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("SYMC_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(cpp_build, "_LOADED", {})
    graph, env, _ = prims_graph(lambda x: ops.tanh(ops.mul(x, 3.0)), [("a", "b")])
    before = dict(cpp_build.STATS)
    inductor.compile_graph(graph, env)
    assert cpp_build.STATS["compiled"] == before["compiled"] + 1
    monkeypatch.setattr(cpp_build, "_LOADED", {})  # a fresh process: only the disk remains
    compiled = inductor.compile_graph(graph, env)
    assert cpp_build.STATS["compiled"] == before["compiled"] + 1
    assert cpp_build.STATS["disk_hits"] == before["disk_hits"] + 1
    x = torch.randn(4, 5)
    torch.testing.assert_close(compiled(x)[0], torch.tanh(x * 3))


def test_a_corrupt_cache_entry_is_rebuilt(tmp_path, monkeypatch):
    monkeypatch.setenv("SYMC_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(cpp_build, "_LOADED", {})
    graph, env, _ = prims_graph(lambda x: ops.sin(ops.add(x, 0.5)), [("a",)])
    inductor.compile_graph(graph, env)
    (entry,) = list((tmp_path / "cpp").glob("*.so"))
    entry.unlink()  # a new file: the loaded library stays mapped
    entry.write_bytes(b"not a shared library")
    monkeypatch.setattr(cpp_build, "_LOADED", {})
    before = cpp_build.STATS["compiled"]
    compiled = inductor.compile_graph(graph, env)
    assert cpp_build.STATS["compiled"] == before + 1
    x = torch.randn(9)
    torch.testing.assert_close(compiled(x)[0], torch.sin(x + 0.5))


def test_dead_buffers_are_reused_for_equal_sizes():
    def fn(x, w):
        a = ops.mm(ops.exp(x), w)  # exp(x) is realized for the extern, then dead
        b = ops.mm(ops.sin(x), w)  # sin(x) has the same size: reuses exp(x)'s buffer
        return ops.add(a, b)
    compiled = _check_sizes(fn, [("a", "b"), ("b", "b")], sizes=(2, 7))
    assert compiled.reused_buffers >= 1, compiled.wrapper_source
    assert "reuses" in compiled.wrapper_source


def test_externs_and_symbol_inputs():
    def fn(x):
        values, indices = ops.sort(x, 1, True)
        return ops.cumsum(values, 1), indices
    _check_sizes(fn, [("a", "b")])


def test_backend_choice_follows_device_and_environment(monkeypatch):
    graph, _, _ = prims_graph(lambda x: ops.exp(x), [("a",)])
    monkeypatch.delenv("SYMC_CPU_BACKEND", raising=False)
    assert inductor.choose_backend(graph, None) == "cpp"
    monkeypatch.setenv("SYMC_CPU_BACKEND", "triton")
    assert inductor.choose_backend(graph, None) == "triton"
    assert inductor.choose_backend(graph, "torch") == "torch"
    with pytest.raises(inductor.LoweringError, match="device_backend"):
        inductor.choose_backend(graph, "fortran")


def test_missing_lowering_names_the_table(monkeypatch):
    from inductor import lowerings
    graph, env, _ = prims_graph(lambda x: ops.exp(x), [("a",)])
    exp = next(n.target for n in graph.nodes if n.op == "call_function")
    monkeypatch.delitem(lowerings.LOWERINGS, exp.op)
    with pytest.raises(inductor.LoweringError, match="add one to inductor/lowerings.py"):
        inductor.compile_graph(graph, env)


def test_cache_dir_honours_the_environment(tmp_path, monkeypatch):
    monkeypatch.setenv("SYMC_CACHE_DIR", str(tmp_path))
    assert cpp_build.cache_dir() == tmp_path / "cpp"
    assert os.path.isdir(tmp_path / "cpp")


def test_matmul_reads_a_transposed_weight_as_a_strided_view():
    import symc

    def linear(x, w):
        return F.linear(x, w)

    compiled = symc.compile(linear)
    for n in (5, 1, 13):
        x, w = torch.randn(n, 8), torch.randn(3, 8)
        with torch.no_grad():
            torch.testing.assert_close(compiled(x, w), linear(x, w))
    (source,) = symc.explain(compiled).entries[0].generated_code.values()
    wrapper = source.split("# ---- kernels")[0]
    assert "# mm, arg1.permute(1, 0)" in wrapper, wrapper
    assert "arg1.data_ptr()" not in wrapper, "the weight should not be copied by a kernel"


def test_few_long_rows_split_each_reduction_across_threads():
    # rows fewer than the threads and 2 grains long: the rows run in turn, each reduction (and
    # the pointwise epilogue over r) split across threads; else the rows run in parallel
    def fn(x):
        var, mean = ops.var_mean(x, (1,), 1)
        return (softmax(x), ops.sum(x, (1,)), ops.amax(x, (1,)), var, mean,
                ops.argmax(x, 1))
    graph, env, _ = prims_graph(fn, [("a", "b")])
    compiled = inductor.compile_graph(graph, env)
    assert "omp_get_max_threads() &&" in compiled.source
    for shape in [(1, 70001), (1, 3), (3, 70001), (5, 11)]:
        # seeded: a float sum of 70001 values in another order differs by ~1e-5, once in a
        # while by more than the tolerance; the same inputs each run
        gen = torch.Generator().manual_seed(shape[0] * 100003 + shape[1])
        x = torch.randn(shape, dtype=torch.float64, generator=gen).float()
        x[0, shape[1] // 2] = 30.0
        for g, w in zip(compiled(x), run_reference(graph, [x]), strict=True):
            torch.testing.assert_close(g, w, atol=1e-4, rtol=1e-4)


def test_wrapper_reads_only_the_sizes_it_uses_and_scratch_addresses_once():
    """A layer norm's weight and bias sizes are symbols of their own, guarded equal to x's last:
    the wrapper never reads them; its skipped buffers' scratch address is a constant."""
    import symc
    from symc.backends import lazy_compiles

    def f(x, w, b):
        return F.layer_norm(x, (x.shape[-1],), w, b, 1e-5)

    g = symc.compile(f)
    cols = 24
    w, b = torch.randn(cols), torch.randn(cols)
    for rows in (2, 1, 7, 31):  # one compilation over several row counts, odd and prime
        x = torch.randn(rows, cols)
        torch.testing.assert_close(g(x, w, b), f(x, w, b), atol=1e-5, rtol=1e-5)
        xt = torch.randn(cols, rows).t()  # a non-contiguous input
        torch.testing.assert_close(g(xt, w, b), f(xt, w, b), atol=1e-5, rtol=1e-5)
    assert g.compiles == 1
    source = lazy_compiles(g.entries[0].run)["inference"].compiled.wrapper_source
    reads = [line.strip() for line in source.splitlines() if ".shape[" in line]
    assert reads == ["s0 = arg0.shape[0]", "s1 = arg0.shape[1]"], source
    assert "scratch0.data_ptr()" not in source and "scratch0_ptr" in source, source
