"""The output meta of a torch call, asked of prims (the one place capture reads shapes rules).

    output_meta(torch.add, (f32[s0, 4], f32[s0, 4]), {}, env)  ->  f32[s0, 4]

`prims.infer_meta` is the contract. Until it exists (or for a target it does not cover yet),
a stand-in runs the op on `meta`-device tensors at the example sizes and maps each output size
back to an input size expression with that value (a heuristic good enough for tests written
before prims existed; prims.infer_meta replaces it as soon as it is importable).
"""

from __future__ import annotations

import re

import sympy
import torch

from capture.errors import Unsupported
from prims import PrimError
from symbolic import ShapeEnv, TensorMeta


def _prims_infer_meta():
    try:
        import prims
    except ImportError:  # pragma: no cover - prims is part of the repo
        return None
    infer = getattr(prims, "infer_meta", None)
    if infer is None:
        try:
            from prims.interpret import infer_meta as infer
        except ImportError:
            return None
    return infer


def output_meta(target, args, kwargs, env: ShapeEnv):
    """TensorMeta (or nested tuple of them, or a scalar) of `target(*args, **kwargs)`, deciding
    sizes in `env` (the capture's ShapeEnv)."""
    infer = _prims_infer_meta()
    if infer is not None:
        try:
            return infer(target, args, kwargs, env)
        except Unsupported:
            raise
        except PrimError as exc:
            # The user location is added once, by the frame that reports the break.
            text = re.sub(r" at [\w.<>-]+:\d+$", "", str(exc))
            error = Unsupported(f"{_name(target)}: {text}")
            # The caller's autocast mode breaks every op: splitting the frame would not help.
            error.resumable = not text.startswith("autocast on ")
            raise error from None
        except NotImplementedError as exc:
            raise Unsupported(f"no decomposition for {_name(target)}: {exc}") from None
        except (KeyError, LookupError) as exc:
            raise Unsupported(f"no decomposition for {_name(target)} ({exc})") from None
    return _meta_by_example(target, args, kwargs, env)


def _name(target) -> str:
    try:
        from prims.decompositions.registry import target_name

        return target_name(target)
    except ImportError:
        pass
    module = getattr(target, "__module__", None) or ""
    qual = getattr(target, "__qualname__", None) or getattr(target, "__name__", repr(target))
    if module.startswith("torch") or module in ("_operator", "operator"):
        return f"{module.replace('_operator', 'operator')}.{qual}"
    return qual


def _meta_by_example(target, args, kwargs, env: ShapeEnv):
    hints = env.hints
    candidates: dict[int, set] = {}

    def to_example(value):
        if isinstance(value, TensorMeta):
            sizes = []
            for s in value.shape:
                hint = int(env.simplify(s).xreplace(hints))
                if not s.is_Integer:
                    candidates.setdefault(hint, set()).add(env.simplify(s))
                sizes.append(hint)
            return torch.empty(sizes, dtype=value.dtype, device="meta")
        if isinstance(value, sympy.Basic):
            return int(value.xreplace(hints))
        if isinstance(value, (tuple, list)):
            return type(value)(to_example(v) for v in value)
        if isinstance(value, dict):
            return {k: to_example(v) for k, v in value.items()}
        if isinstance(value, slice):
            return slice(to_example(value.start), to_example(value.stop), to_example(value.step))
        return value

    try:
        out = target(*to_example(tuple(args)), **to_example(dict(kwargs)))
    except Exception as exc:  # noqa: BLE001 - any torch failure is a break, with its text
        raise Unsupported(f"{_name(target)} failed on example sizes: {exc}") from None

    def to_meta(value):
        if isinstance(value, torch.Tensor):
            shape = []
            for size in value.shape:
                options = candidates.get(int(size), set())
                if options:
                    # Stand-in only: the first symbol with this example value.
                    shape.append(sorted(options, key=sympy.default_sort_key)[0])
                else:
                    shape.append(sympy.Integer(int(size)))
            return TensorMeta.contiguous(tuple(shape), value.dtype, _device(args))
        if isinstance(value, (tuple, list)):
            return tuple(to_meta(v) for v in value)
        if isinstance(value, (int, float, bool)) or value is None:
            return value
        raise Unsupported(f"{_name(target)} returned a {type(value).__name__}")

    return to_meta(out)


def _device(args) -> torch.device:
    for a in args:
        if isinstance(a, TensorMeta):
            return a.device
        if isinstance(a, (tuple, list)):
            for b in a:
                if isinstance(b, TensorMeta):
                    return b.device
    return torch.device("cpu")
