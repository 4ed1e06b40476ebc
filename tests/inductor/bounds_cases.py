"""Reproducers of out-of-bounds, division and index-check bugs, run in a child process.

    python tests/inductor/bounds_cases.py inductor [case ...]

prints one line per case, `CASE <name> OK` or `CASE <name> FAIL <why>`, so a test in
test_bounds.py sees a crash (SIGSEGV, SIGFPE) as a dead child and the case it died in, instead of
losing the pytest process. Each case compiles one function with symc (backend from argv; the
environment picks C++ or Triton and SYMC_DEBUG_BOUNDS) and calls it over sizes that include 1,
2, primes and sizes above the first call's hint; every call is compared with eager PyTorch:
the same values (and gradients, for float inputs that require them), or the same exception type.
"""

from __future__ import annotations

import sys

import torch
import torch.nn.functional as F

import symc


def _f(*shape):
    return torch.randn(*shape)


def _ar(n):
    return torch.arange(n, dtype=torch.float32) - 2


def _i(*values):
    return torch.tensor(values, dtype=torch.int64)


# name -> (function, calls: list of argument tuples, differentiate float inputs?)
CASES = {
    # slice bounds from another input's size, past the dim (clamped like eager)
    "slice_bound_from_other_size": (lambda a, b: a[..., :b.shape[0]] * 2, [
        (_f(3, 4), _f(2)), (_f(3, 4), _f(9)), (_f(3, 2), _f(7)), (_f(5, 13), _f(11)),
        (_f(2, 1), _f(3)), (_f(7, 5), _f(2))], True),
    "slice_to_n_minus_1": (lambda a: a[: a.shape[0] - 1] * 2, [
        (_f(5, 3),), (_f(1, 3),), (_f(2, 3),), (_f(7, 3),), (_f(13, 3),)], True),
    # floor division / modulo of sizes with negative operands (C's / and % truncate)
    "negative_floordiv_scale": (lambda x: x * (-x.shape[0] // 2), [
        (_ar(4),), (_ar(5),), (_ar(7),), (_ar(1),), (_ar(2),), (_ar(13),)], True),
    "roll_negative_shift": (lambda x: x.roll(-3, 0) * 1, [
        (_ar(4),), (_ar(5),), (_ar(2),), (_ar(1),), (_ar(7),), (_ar(11),)], True),
    "slice_to_negative_floordiv": (lambda x: x[: -x.shape[0] // 2] + 0, [
        (_ar(4),), (_ar(5),), (_ar(1),), (_ar(7),), (_ar(2),), (_ar(13),)], True),
    "pad_to_multiple_by_modulo": (lambda x: F.pad(x, (0, (-x.shape[-1]) % 8)) * 1, [
        (_f(2, 5),), (_f(2, 11),), (_f(3, 8),), (_f(1, 1),), (_f(2, 2),), (_f(3, 17),)], True),
    # a view's inferred dim is an exact quotient with rational coefficients (s/8 + Mod(-s, 8)/8):
    # printed as integer division in both printers and the wrapper (was "Rational in 1/8")
    "pad_then_view_by_modulo": (
        lambda x: F.pad(x, (0, (-x.shape[-1]) % 8)).view(x.shape[0], -1, 8) * 1, [
            (_f(2, 5),), (_f(2, 11),), (_f(3, 8),), (_f(2, 1),), (_f(2, 16),), (_f(1, 17),)],
        True),
    # a cat piece that is empty at run time (its clamped position is past its base buffer)
    "cat_with_empty_piece": (lambda a, b: torch.cat([a[b.shape[0]:], a[:b.shape[0]]]) * 1, [
        (_ar(5), _f(2)), (_ar(5), _f(5)), (_ar(3), _f(3)), (_ar(7), _f(1)), (_ar(2), _f(7))],
        True),
    # integer division of tensors by zero: eager raises RuntimeError("ZeroDivisionError")
    "int_floordiv_by_zero": (lambda a, b: a // b, [
        (_i(1, 2, 3, 4), _i(1, 2, 3, 4)), (_i(1, 2, 3, 4), _i(1, 0, 3, 4)),
        (_i(7, -7, 5), _i(2, 2, -3)), (_i(5), _i(0))], False),
    "int_remainder_by_zero": (lambda a, b: a % b, [
        (_i(1, 2, 3, 4), _i(1, 2, 3, 4)), (_i(1, 2, 3, 4), _i(1, 0, 3, 4)),
        (_i(7, -7, 5), _i(2, 2, -3))], False),
    "div_floor_by_zero": (lambda a, b: torch.div(a, b, rounding_mode="floor"), [
        (_i(1, 2, 3, 4), _i(1, 2, 3, 4)), (_i(1, 2, 3, 4), _i(1, 0, 3, 4))], False),
    "div_trunc_by_zero": (lambda a, b: torch.div(a, b, rounding_mode="trunc"), [
        (_i(7, -7, 7, -7, 2**62 + 1), _i(2, 2, -2, -2, 3)), (_i(1, 2, 3), _i(1, 0, 3))], False),
    "floordiv_by_constant_zero": (lambda a: a // 0, [(_i(1, 2, 3, 4),), (_i(5, 6),)], False),
    "remainder_by_constant_zero": (lambda a: a % 0, [(_i(1, 2, 3, 4),), (_i(5, 6),)], False),
    # data-dependent indices: both signs checked, IndexError like eager
    "index_negative_out_of_range": (lambda x, i: x[i] * 1, [
        (_ar(5), _i(-1)), (_ar(5), _i(-6)), (_ar(5), _i(5)), (_ar(5), _i(-5, 4)),
        (_ar(7), _i(-8))], True),
    "index_into_empty": (lambda x, i: x[i] * 1, [
        (_ar(3), _i(0)), (torch.zeros(0), _i(0)), (torch.zeros(0), _i(-1))], True),
    "index_two_dims_checked_per_dim": (lambda x, i, j: x[i, j] * 1, [
        (_f(3, 5), _i(0, 2), _i(1, -1)), (_f(3, 5), _i(0), _i(5)), (_f(3, 5), _i(-4), _i(0)),
        (_f(3, 5), _i(2), _i(-5))], True),
    "embedding_out_of_range": (lambda i, w: F.embedding(i, w) * 1, [
        (_i(0, 2), _f(3, 2)), (_i(3), _f(3, 2)), (_i(-1), _f(3, 2)), (_i(1, 4), _f(5, 3))],
        True),
}


def _clone(args, grad: bool):
    out = []
    for a in args:
        a = a.clone()
        if grad and a.dtype.is_floating_point:
            a.requires_grad_(True)
        out.append(a)
    return out


def _run(fn, args, grad: bool):
    """(output, gradients) or the exception raised."""
    try:
        out = fn(*args)
        grads = ()
        if grad and out.requires_grad:
            weight = torch.linspace(-1, 1, out.numel()).reshape(out.shape)
            (out * weight).sum().backward()
            grads = tuple(a.grad for a in args if a.requires_grad)
        return out.detach(), grads
    except Exception as e:  # noqa: BLE001 - compared with eager's exception
        return e


def _compare(expected, found) -> str | None:
    if isinstance(expected, Exception):
        if not isinstance(found, type(expected)):
            return f"eager raised {expected!r}, symc gave {found!r}"
        return None
    if isinstance(found, Exception):
        return f"eager gave a result, symc raised {found!r}"
    (eo, eg), (fo, fg) = expected, found
    try:
        torch.testing.assert_close(fo, eo, equal_nan=True)
        if len(eg) != len(fg):
            return f"expected {len(eg)} gradients, found {len(fg)}"
        for e, f in zip(eg, fg):
            if e is not None:  # None vs zeros for an input used only for its size: not ours
                torch.testing.assert_close(f, e)
    except AssertionError as err:
        return str(err).replace("\n", " ")
    return None


def run_case(name: str, backend: str) -> str | None:
    fn, calls, grad = CASES[name]
    compiled = symc.compile(fn, backend=backend)
    for args in calls:
        expected = _run(fn, _clone(args, grad), grad)
        found = _run(compiled, _clone(args, grad), grad)
        problem = _compare(expected, found)
        if problem is not None:
            shapes = [tuple(a.shape) for a in args]
            return f"at {shapes}: {problem}"
    return None


def main(argv) -> int:
    backend, names = argv[0], argv[1:] or list(CASES)
    failed = 0
    for name in names:
        print(f"START {name}", flush=True)
        problem = run_case(name, backend)
        failed += problem is not None
        print(f"CASE {name} " + ("OK" if problem is None else f"FAIL {problem}"), flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
