"""Random numbers: `philox_rand` and the hash every backend must reproduce bit for bit.

`philox_hash(seed, counter)` is a counter-based hash (not Philox proper: it is cheaper and
easier to write identically in Python, C++ and Triton). All values are uint32 (mod 2**32):

    mul32(x, c)  = (x * c) mod 2**32
    fmix32(h)    = h ^= h >> 16; h = mul32(h, 0x85EBCA6B); h ^= h >> 13;
                   h = mul32(h, 0xC2B2AE35); h ^= h >> 16            (MurmurHash3's finaliser)
    key          = fmix32(lo32(seed) ^ 0x9E3779B9 ^ mul32(hi32(seed) ^ hi32(counter), 0x85EBCA77))
    h            = fmix32(key ^ lo32(counter))
    h            = fmix32(h ^ mul32(key, 0x27D4EB2F))
    u(h, f32)    = (h >> 8) * 2**-24        (exact in f32; in [0, 1))

where counter = offset + linear (row-major) index of the element. f64 uses the f32 formula;
f16 and bf16 keep the top 11 / 8 bits ((h >> 21) * 2**-11, (h >> 24) * 2**-8) so no value
rounds up to 1.0. Python refs run it on int64 tensors, multiplying in 16-bit halves so no
intermediate overflows int64.

Seeds: `next_seed()` gives decompositions (dropout) a 0-dim int64 seed tensor and
`next_offset(n)` the start of the counter range they own:
  - real tensors (no tracer): a fresh seed from torch's global generator, offset 0;
  - a tracer with a `rng_seed()` method (GraphTracer in `prims.decompose` adds one graph input,
    the placeholder named `rng_seed`, the first time it is asked): that value, and offsets that
    advance by each call's numel (`tracer.rng_offset`, a sympy expression);
  - a tracer without one (MetaTracer): a 0-dim int64 TensorMeta.

A `manual_seed(c)` inside the graph switches the stream to the constant seed `seed_of(c)`
(`tracer.rng_manual`); prims/generators.py keeps that state and says what torch's generators
look like after the call.
"""

from __future__ import annotations

import torch

from prims.core import PRIMS, PrimError, PrimKind, current_tracer, register_prim
from prims.sizes import as_expr, concrete
from symbolic import TensorMeta

MASK32 = 0xFFFFFFFF
MANTISSA_BITS = {torch.float32: 24, torch.float64: 24, torch.float16: 11, torch.bfloat16: 8}


def mul32(x: torch.Tensor, c: int) -> torch.Tensor:
    """(x * c) mod 2**32 for uint32 values held in int64, without int64 overflow."""
    lo, hi = c & 0xFFFF, (c >> 16) & 0xFFFF
    return (x * lo + (((x * hi) & 0xFFFF) << 16)) & MASK32


def fmix32(h: torch.Tensor) -> torch.Tensor:
    h = h ^ (h >> 16)
    h = mul32(h, 0x85EBCA6B)
    h = h ^ (h >> 13)
    h = mul32(h, 0xC2B2AE35)
    return h ^ (h >> 16)


def philox_hash(seed: torch.Tensor, counter: torch.Tensor) -> torch.Tensor:
    """uint32 hash (as int64 in [0, 2**32)) of int64 `seed` and int64 `counter` tensors."""
    seed = seed.to(torch.int64)
    counter = counter.to(torch.int64)
    high = ((seed >> 32) & MASK32) ^ ((counter >> 32) & MASK32)
    key = fmix32((seed & MASK32) ^ 0x9E3779B9 ^ mul32(high, 0x85EBCA77))
    h = fmix32(key ^ (counter & MASK32))
    return fmix32(h ^ mul32(key, 0x27D4EB2F))


def uniform_from_hash(h: torch.Tensor, dtype: torch.dtype) -> torch.Tensor:
    """Map uint32 hashes to [0, 1) in `dtype`, exactly (see the module docstring)."""
    bits = MANTISSA_BITS.get(dtype)
    if bits is None:
        raise PrimError(f"philox_rand: expected a float dtype, found {dtype}")
    top = (h >> (32 - bits)).to(torch.float32) * (2.0 ** -bits)
    return top.to(dtype)


def _philox_rand_meta(seed, offset, shape, dtype, device):
    if seed.ndim != 0 or seed.dtype != torch.int64:
        raise PrimError(f"philox_rand: expected a 0-dim int64 seed, found {seed}")
    if dtype not in MANTISSA_BITS:
        raise PrimError(f"philox_rand: expected a float dtype, found {dtype}")
    return TensorMeta.contiguous(tuple(shape), dtype, device)


def _philox_rand_ref(seed, offset, shape, dtype, device):
    shape = tuple(concrete(s) for s in shape)
    numel = 1
    for s in shape:
        numel *= s
    counter = torch.arange(numel, dtype=torch.int64, device=device) + concrete(offset)
    h = philox_hash(seed.to(device), counter)
    return uniform_from_hash(h, dtype).reshape(shape)


philox_rand = register_prim(
    "philox_rand", PrimKind.RANDOM, _philox_rand_meta, _philox_rand_ref,
    doc="uniform [0, 1) from philox_hash(seed, offset + linear index)")


def seed_of(c: int) -> int:
    """The stream seed `manual_seed(c)` starts (any int64 c; the hash mixes both halves)."""
    return c & (2**63 - 1)


def next_seed():
    """A 0-dim int64 seed for a random decomposition (see the module docstring)."""
    tracer = current_tracer()
    if tracer is None:
        return torch.randint(0, 2**62, (), dtype=torch.int64)
    provider = getattr(tracer, "rng_seed", None)
    if provider is None:
        return TensorMeta.contiguous((), torch.int64)
    manual = getattr(tracer, "rng_manual", None)
    if manual is not None:  # prims.creation registers "full" (ops imports this module)
        return PRIMS["full"]((), seed_of(manual), torch.int64, tracer.rng_device())
    return provider()


def next_offset(numel):
    """The first counter a random call of `numel` elements owns; advances the tracer's counter."""
    tracer = current_tracer()
    if tracer is None:
        return 0
    start = getattr(tracer, "rng_offset", 0)
    try:
        tracer.rng_offset = as_expr(start) + as_expr(numel)
        tracer.rng_drew = True
    except AttributeError:  # a tracer with slots or frozen: every call starts at 0
        return 0
    return start
