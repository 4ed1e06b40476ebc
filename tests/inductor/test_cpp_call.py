"""C++ kernels are called through the vectorcall extension (inductor/runtime/cpp_call.c): the
wrapper's kernels are its objects, they compute what the ctypes path computes, check their
argument count and types, raise eager's error from the kernel's error flag, and with the
extension off (SYMC_CPP_FASTCALL=0 or no compiler) kernels fall back to ctypes."""

from __future__ import annotations

import ctypes
import re
import time

import pytest
import torch

import inductor
from inductor.runtime import cpp_call
from tests.inductor.inductor_graphs import decomposed, prims_graph


def _compiled(fn, shapes, dtypes=torch.float32):
    graph, env, _ = prims_graph(fn, shapes, dtypes)
    return inductor.compile_graph(graph, env, device_backend="cpp")


def _softmax():
    return _compiled(lambda x: decomposed(torch.softmax, x, -1), [("a", "b")])


def _kernels(compiled) -> list:
    return [v for k, v in compiled.run.__globals__.items() if k.startswith("k")
            and callable(v)]


@pytest.fixture
def without_extension(monkeypatch):
    monkeypatch.setattr(cpp_call, "_STATE", {"module": None, "reason": "off (test)"})


def test_kernels_are_the_extension_objects():
    assert cpp_call.module() is not None, cpp_call.fallback_reason()
    kernels = _kernels(_softmax())
    assert kernels and all(type(k).__name__ == "Kernel" for k in kernels), kernels


def test_same_results_as_ctypes(without_extension):
    x = torch.randn(37, 301)
    slow = _softmax()
    assert not any(type(k).__name__ == "Kernel" for k in _kernels(slow)), _kernels(slow)
    got_slow = slow(x)[0]
    cpp_call._STATE.clear()  # the extension again
    fast = _softmax()
    assert all(type(k).__name__ == "Kernel" for k in _kernels(fast))
    torch.testing.assert_close(fast(x)[0], got_slow, rtol=0, atol=0)
    torch.testing.assert_close(got_slow, torch.softmax(x, -1))


def test_argument_count_and_types_are_checked():
    kernel = _kernels(_softmax())[0]
    with pytest.raises(TypeError, match="expected .* arguments, found 1") as info:
        kernel(0)
    n = int(re.search(r"expected (\d+) arguments", str(info.value)).group(1))
    with pytest.raises(TypeError, match="expected an int .* at argument 0"):
        kernel(1.5, *[0] * (n - 1))  # converted before the kernel runs: nothing is read


@pytest.mark.parametrize("extension", [True, False])
def test_error_flag_raises_index_error(extension, monkeypatch):
    """A gather index past the table: the flag set by the kernel becomes eager's IndexError,
    and is reset (the next valid call runs)."""
    if not extension:
        monkeypatch.setattr(cpp_call, "_STATE", {"module": None, "reason": "off (test)"})
    compiled = _compiled(lambda t, i: decomposed(torch.index_select, t, 0, i), [("n", 4), ("m",)],
                         [torch.float32, torch.int64])
    table = torch.randn(5, 4)
    with pytest.raises(IndexError, match="index out of range"):
        compiled(table, torch.tensor([1, 7]))
    torch.testing.assert_close(compiled(table, torch.tensor([4, 0]))[0], table[[4, 0]])


def test_call_is_cheaper_than_ctypes():
    """The point of the extension: a kernel call with 8 arguments costs less than ctypes'
    (minimum over many calls; the extension's is ~0.1 us against ~1.3 us, and the kernel's
    work on one row of 8 is a few ns)."""
    compiled = _compiled(lambda x, w, b: decomposed(torch.nn.functional.layer_norm, x,
                                                    x.size()[-1:], w, b),
                         [("a", "b"), ("b",), ("b",)])
    (fast,) = _kernels(compiled)
    head = re.search(r'extern "C" void k\w*\(([^)]*)\)', compiled.kernel_source).group(1)
    params = head.split(", ")
    assert [p.split()[-1] for p in params[-2:]] == ["s0", "s1"], params
    buffers = [torch.randn(8) for _ in params[:-2]]  # every buffer of a 1 x 8 layer norm fits
    args = [b.data_ptr() for b in buffers] + [1, 8]
    labs = ctypes.CDLL(None).labs  # ctypes' own argument handling, the same 8 arguments
    labs.argtypes = [ctypes.c_void_p] * (len(params) - 2) + [ctypes.c_int64] * 2
    labs.restype = ctypes.c_long

    def best(fn):
        times = []
        for _ in range(3000):
            start = time.perf_counter()
            fn(*args)
            times.append(time.perf_counter() - start)
        return min(times)
    assert best(fast) < best(labs)
