"""torch's generators read and set inside a graph: the graph's random stream and the rest.

    torch.manual_seed(42)          # draws after it: a function of 42 and the sizes only
    s = torch.get_rng_state()      # -> RngState (a snapshot, not a tensor)
    torch.set_rng_state(s)         # draws after it repeat those after the get

capture.rng_state puts these calls in the torch-level graph, in program order; their
decompositions (prims/decompositions/random_state.py) call the functions here while
`prims.decompose` runs. A graph draws from one generator: that of its inputs' device (the
*draw* generator: "cpu" or "cuda", `GraphTracer.rng_device`). Its draws form a *stream*: a seed
and the counter offset of the next draw (prims/random.py). The graph starts on the *entry*
stream (seed: the `rng_seed` input, drawn from the draw generator on each call, offset 0):
  - `manual_seed(c)` switches to the stream (seed `seed_of(c)`, offset 0), and seeds every
    other generator with c, as torch.manual_seed does;
  - `get_rng_state()` / `torch.cuda.get_rng_state()` snapshot their generator: the stream
    (seed and offset) for the draw generator, for another one whether it was seeded (and with
    what) since the call began; `set_rng_state(s)` switches back, so the draws after it repeat
    those after the get, as eager's do.
`rng_final(tracer)` is what the generators must look like after the call; symc.backends applies
it: the draw generator is
  - "advanced" (entry stream, some elements drawn): by the one seed draw of the call;
  - "restored" (entry stream, offset 0: nothing drawn, or restored to a state taken before any
    draw): exactly as before the call (the seed draw is undone);
  - ("seeded", c, drew): seeded with c, then, when the stream drew, advanced by one draw, so
    it is a deterministic function of c (not eager's own state after the same draws: symc's
    stream is not torch's);
and each other generator that ends seeded is seeded again with its c (`reseed`), the others
are never touched.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from prims.core import PrimError, current_tracer

KINDS = ("cpu", "cuda")  # the generators a graph can read or set


@dataclass(frozen=True)
class RngState:
    """`get_rng_state()` of the generator `kind`: for the draw generator `(manual, offset,
    drew)` of its stream (manual None: the entry stream); for another, its seed or None."""

    kind: str
    value: object


@dataclass(frozen=True)
class RngFinal:
    """The generators after a call: `draw` for the draw generator (see the module docstring),
    `reseed` the (kind, seed) of every other generator left seeded."""

    draw: object
    reseed: tuple = ()
    kind: str = "cpu"  # the draw generator's


def _draw_kind(tracer) -> str:
    return torch.device(tracer.rng_device()).type


def _others(tracer) -> dict:
    if getattr(tracer, "rng_others", None) is None:
        tracer.rng_others = {}
    return tracer.rng_others


def _check_kind(kind: str) -> None:
    if kind not in KINDS:
        raise PrimError(f"rng state: expected a generator of {KINDS}, found {kind!r}")


def get_state(kind: str) -> RngState:
    _check_kind(kind)
    tracer = current_tracer()
    if kind == _draw_kind(tracer):
        return RngState(kind, (getattr(tracer, "rng_manual", None),
                               getattr(tracer, "rng_offset", 0),
                               getattr(tracer, "rng_drew", False)))
    return RngState(kind, _others(tracer).get(kind))


def set_state(state: RngState) -> None:
    tracer = current_tracer()
    if not isinstance(state, RngState):
        raise PrimError(f"set_rng_state: expected the state of a get_rng_state() in the same "
                        f"graph, found {type(state).__name__}")
    if state.kind == _draw_kind(tracer):
        tracer.rng_manual, tracer.rng_offset, tracer.rng_drew = state.value
    else:
        _others(tracer)[state.kind] = state.value


def manual_seed(c: int) -> None:
    if not isinstance(c, int):
        raise PrimError(f"manual_seed: expected an int seed, found {c!r}")
    tracer = current_tracer()
    draw = _draw_kind(tracer)
    set_state(RngState(draw, (c, 0, False)))
    for kind in KINDS:
        if kind != draw:
            set_state(RngState(kind, c))


def rng_final(tracer) -> RngFinal:
    """What the generators must be after the graph (see the module docstring)."""
    manual = getattr(tracer, "rng_manual", None)
    drew = getattr(tracer, "rng_drew", False)
    draw = ("seeded", manual, drew) if manual is not None else (
        "advanced" if drew else "restored")
    others = getattr(tracer, "rng_others", None) or {}
    return RngFinal(draw, tuple((k, c) for k, c in sorted(others.items()) if c is not None),
                    _draw_kind(tracer))


def seed_generator(kind: str, c: int) -> None:
    """Seed one generator as torch.manual_seed(c) seeds it (every CUDA device for "cuda")."""
    if kind == "cuda":
        torch.cuda.manual_seed_all(c)
    else:
        torch.default_generator.manual_seed(c)


__all__ = ["KINDS", "RngFinal", "RngState", "get_state", "manual_seed", "rng_final",
           "seed_generator", "set_state"]
