"""Compare a compiled function with eager PyTorch, forward and backward, over several sizes.

    assert_matches_eager(fn, lambda n: [torch.randn(3, n, requires_grad=True)], sizes=(4, 1, 7))

Each backend compiles once (the first size is the hint); every later size must give eager's
outputs (type included: `torch.return_types.*` stay named tuples) and eager's input gradients.
"""

from __future__ import annotations

import torch

import symc

BACKENDS = ("eager", "prims", "aot_eager", "inductor")


def _clone(value):
    if isinstance(value, torch.Tensor):
        return value.detach().clone().requires_grad_(value.requires_grad)
    return value


def _flat(value) -> list:
    if isinstance(value, (tuple, list)):
        return [t for v in value for t in _flat(v)]
    return [value]


def _loss(outputs) -> torch.Tensor | None:
    terms = [o.float().sum() if not o.is_complex() else o.abs().sum() for o in _flat(outputs)
             if isinstance(o, torch.Tensor) and o.requires_grad]
    return sum(terms) if terms else None


def assert_matches_eager(fn, make_inputs, sizes, backends=BACKENDS, *, backward=True,
                         atol=1e-5, rtol=1e-4) -> None:
    for backend in backends:
        compiled = symc.compile(fn, backend=backend)
        for n in sizes:
            inputs = make_inputs(n)
            eager_in = [_clone(i) for i in inputs]
            comp_in = [_clone(i) for i in inputs]
            expected = fn(*eager_in)
            found = compiled(*comp_in)
            where = f"backend {backend}, size {n}"
            assert type(found) is type(expected), f"{where}: expected {type(expected)}, " \
                                                  f"found {type(found)}"
            exp_flat, found_flat = _flat(expected), _flat(found)
            assert len(exp_flat) == len(found_flat), where
            for e, f in zip(exp_flat, found_flat):
                if isinstance(e, torch.Tensor):
                    torch.testing.assert_close(f, e, atol=atol, rtol=rtol, equal_nan=True,
                                               msg=lambda m: f"{where}: {m}")
                else:
                    assert f == e, f"{where}: expected {e!r}, found {f!r}"
            loss = _loss(expected) if backward else None
            if loss is None:
                continue
            loss.backward()
            _loss(found).backward()
            for i, (e, f) in enumerate(zip(eager_in, comp_in)):
                if isinstance(e, torch.Tensor) and e.requires_grad:
                    assert f.grad is not None, f"{where}: no gradient for input {i}"
                    torch.testing.assert_close(f.grad, e.grad, atol=atol, rtol=rtol,
                                               equal_nan=True,
                                               msg=lambda m: f"{where}, grad of input {i}: {m}")
