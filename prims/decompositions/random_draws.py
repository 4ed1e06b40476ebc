"""Random draws as prims: uniform draws from the graph's stream and inverse-CDF formulas.

    torch.rand(3, 4)            -> philox_rand(seed, offset, (3, 4), f32)          u in [0, 1)
    torch.randn(3)              -> sqrt(-2 log(1 - u1)) * cos(2 pi u2)             Box-Muller
    x.exponential_(lambd)       -> -log(1 - u) / lambd

Every draw takes its own counter range of the stream (prims/random.py `next_seed`,
`next_offset`), so the values are symc's, not torch's generator's: the distributions are the
same, the numbers are not. Formulas compute in float32 (float64 for float64 outputs) and cast.
`1 - u` lies in (0, 1], so no logarithm sees 0. A `generator=` argument is an error (symc
draws from its own stream only), and so is a randint range wider than the 2**24 values a
draw resolves.
"""

from __future__ import annotations

import math

import torch

from prims import ops
from prims.core import PrimError
from prims.decompositions.common import (
    broadcast_tensors,
    broadcast_to,
    convert,
    device_of,
    is_tensor,
    parse_size,
    shape_of,
    unsqueeze,
)
from prims.decompositions.creation import _device
from prims.decompositions.nn import dropout_mask, dropout_without_draws
from prims.decompositions.registry import decomposition_for, register_decomposition
from prims.random import next_offset, next_seed
from prims.sizes import as_expr, require

T = torch.Tensor
UNIFORM_BITS = 24  # the resolution of one philox_rand draw


def _no_generator(generator) -> None:
    if generator is not None:
        raise PrimError("a torch.Generator argument: symc draws from the graph's own stream "
                        "(prims/random.py), never from a generator object")


def _compute(dtype):
    return torch.float64 if dtype == torch.float64 else torch.float32


def uniform01(shape, dtype, device):
    """u in [0, 1) of `shape`, in the compute dtype of `dtype`, from a fresh counter range."""
    shape = tuple(shape)
    numel = 1
    for s in shape:
        numel = as_expr(numel) * as_expr(s)
    seed = next_seed()
    return ops.philox_rand(seed, next_offset(numel), shape, _compute(dtype), device)


def _log_open(u):
    """log(1 - u): finite, since 1 - u is in (0, 1]."""
    return ops.log(ops.sub(1.0, u))


def normal01(shape, dtype, device):
    """Standard normal draws (Box-Muller over two uniform draws), in the compute dtype."""
    radius = ops.sqrt(ops.mul(_log_open(uniform01(shape, dtype, device)), -2.0))
    angle = ops.mul(uniform01(shape, dtype, device), 2 * math.pi)
    return ops.mul(radius, ops.cos(angle))


def _factory(draw):
    def create(*size, generator=None, dtype=None, device=None, layout=None,
               requires_grad=False, pin_memory=False, out=None, names=None):
        _no_generator(generator)
        dtype = dtype or torch.get_default_dtype()
        return convert(draw(parse_size(size), dtype, _device(device)), dtype)

    return create


def _like(draw):
    def create(a, *, generator=None, dtype=None, device=None, layout=None,
               requires_grad=False, pin_memory=False, memory_format=None):
        _no_generator(generator)
        dtype = dtype or a.dtype
        return convert(draw(shape_of(a), dtype, _device(device or a.device)), dtype)

    return create


register_decomposition(torch.rand)(_factory(uniform01))
register_decomposition(torch.randn)(_factory(normal01))
register_decomposition(torch.rand_like)(_like(uniform01))
register_decomposition(torch.randn_like)(_like(normal01))


def _integers(shape, low, high, dtype, device):
    """Uniform integers in [low, high): floor(low + u * (high - low))."""
    if not isinstance(low, int) or not isinstance(high, int):
        raise PrimError(f"randint: expected int bounds, found {low!r}, {high!r}")
    if high <= low:
        raise PrimError(f"randint: expected low < high, found [{low}, {high})")
    if high - low > 2 ** UNIFORM_BITS:
        raise PrimError(f"randint: a range of {high - low} values is wider than the "
                        f"2**{UNIFORM_BITS} one draw resolves")
    u = uniform01(shape, torch.float64, device)
    return convert(ops.floor(ops.add(ops.mul(u, float(high - low)), float(low))), dtype)


@register_decomposition(torch.randint)
def randint(*args, generator=None, dtype=None, device=None, layout=None, requires_grad=False,
            pin_memory=False, out=None):
    _no_generator(generator)
    if len(args) not in (2, 3):
        raise PrimError(f"randint: expected (high, size) or (low, high, size), found {args}")
    low, high, size = (0, *args) if len(args) == 2 else args
    return _integers(tuple(size), low, high, dtype or torch.int64, _device(device))


@register_decomposition(torch.randint_like)
def randint_like(a, *args, generator=None, dtype=None, device=None, layout=None,
                 requires_grad=False, pin_memory=False, memory_format=None, low=None,
                 high=None):
    _no_generator(generator)
    bounds = [b for b in (low, high) if b is not None] if not args else list(args)
    low, high = (0, *bounds) if len(bounds) == 1 else bounds
    return _integers(shape_of(a), low, high, dtype or a.dtype, _device(device or a.device))


# ------------------------------------------------------------------ distributions of a tensor
def _fill(a, values):
    """The in-place draws' result: `values` in `a`'s dtype (functionalize writes it back)."""
    return convert(values, a.dtype)


def _uniform_like(a):
    return uniform01(shape_of(a), a.dtype, device_of(a))


@register_decomposition(T.uniform_)
def uniform_(a, *args, generator=None, **kwargs):
    _no_generator(generator)
    low, high = (*args, *[kwargs[k] for k in ("from", "to") if k in kwargs], 0, 1)[:2] \
        if args or kwargs else (0, 1)
    return _fill(a, ops.add(ops.mul(_uniform_like(a), float(high - low)), float(low)))


@register_decomposition(T.normal_)
def normal_(a, mean=0, std=1, *, generator=None):
    _no_generator(generator)
    z = normal01(shape_of(a), a.dtype, device_of(a))
    return _fill(a, ops.add(ops.mul(z, float(std)), float(mean)))


@register_decomposition(T.log_normal_)
def log_normal_(a, mean=1, std=2, *, generator=None):
    _no_generator(generator)
    z = normal01(shape_of(a), a.dtype, device_of(a))
    return _fill(a, ops.exp(ops.add(ops.mul(z, float(std)), float(mean))))


@register_decomposition(T.exponential_)
def exponential_(a, lambd=1, *, generator=None):
    _no_generator(generator)
    return _fill(a, ops.div(ops.neg(_log_open(_uniform_like(a))), float(lambd)))


@register_decomposition(T.cauchy_)
def cauchy_(a, median=0, sigma=1, *, generator=None):
    _no_generator(generator)
    t = ops.tan(ops.mul(ops.sub(_uniform_like(a), 0.5), math.pi))
    return _fill(a, ops.add(ops.mul(t, float(sigma)), float(median)))


@register_decomposition(T.geometric_)
def geometric_(a, p, *, generator=None):
    """The number of Bernoulli(p) trials up to the first success: floor(log(1-u)/log(1-p))+1."""
    _no_generator(generator)
    if not 0 < p <= 1:
        raise PrimError(f"geometric_: expected 0 < p <= 1, found {p}")
    if p == 1:
        return _fill(a, ops.full(shape_of(a), 1, a.dtype, device_of(a)))
    trials = ops.floor(ops.div(_log_open(_uniform_like(a)), math.log1p(-p)))
    return _fill(a, ops.add(trials, 1.0))


@register_decomposition(torch.bernoulli, T.bernoulli)
def bernoulli(a, p=None, *, generator=None):
    """1 where u < p (p: `a` itself, or the float/tensor `p`), else 0, in `a`'s dtype."""
    _no_generator(generator)
    u = _uniform_like(a)
    if is_tensor(p):
        u, p = broadcast_tensors(u, p)
    probability = a if p is None else p
    if is_tensor(probability):
        probability = convert(probability, u.dtype)
    else:
        probability = float(probability)
    drawn = convert(ops.lt(u, probability), a.dtype)
    # torch.bernoulli(probabilities) is differentiable with a zero gradient (as eager: the
    # result requires grad when they do); a * 0 is 0 for every probability in [0, 1].
    return ops.add(drawn, ops.mul(a, 0.0)) if p is None and a.dtype.is_floating_point else drawn


@register_decomposition(T.bernoulli_)
def bernoulli_(a, p=0.5, *, generator=None):
    return bernoulli(a, p if is_tensor(p) else float(p), generator=generator)


@register_decomposition(torch.normal)
def normal(mean=0.0, std=1.0, size=None, *, generator=None, dtype=None, device=None,
           layout=None, requires_grad=False, pin_memory=False, out=None):
    """normal(Tensor, Tensor), (Tensor, float), (float, Tensor), (float, float, size)."""
    _no_generator(generator)
    tensors = [v for v in (mean, std) if is_tensor(v)]
    if not tensors:
        if size is None:
            raise PrimError("normal: expected a size with float mean and std")
        dtype = dtype or torch.get_default_dtype()
        z = normal01(parse_size((size,)), dtype, _device(device))
        return convert(ops.add(ops.mul(z, float(std)), float(mean)), dtype)
    if size is not None:
        raise PrimError("normal: a size with a tensor mean or std")
    dtype = tensors[0].dtype
    if len(tensors) == 2:
        mean, std = broadcast_tensors(mean, std)
    shape = shape_of(tensors[0] if len(tensors) == 1 else mean)
    z = convert(normal01(shape, dtype, device_of(tensors[0])), dtype)
    return ops.add(ops.mul(z, std if is_tensor(std) else float(std)),
                   mean if is_tensor(mean) else float(mean))


@register_decomposition(torch.multinomial, T.multinomial)
def multinomial(a, num_samples, replacement=False, *, generator=None):
    """Indices drawn with probabilities proportional to `a`'s last dim. With replacement:
    inverse CDF (the count of CDF entries <= u); without: the `num_samples` smallest of
    Exp(1) / p (an exponential race: each index wins in proportion to its weight)."""
    _no_generator(generator)
    if len(shape_of(a)) not in (1, 2):
        raise PrimError(f"multinomial: expected a 1-d or 2-d input, found {shape_of(a)}")
    compute = _compute(a.dtype)
    weights = convert(a, compute)
    *batch, categories = shape_of(a)
    if not replacement:
        require(as_expr(num_samples) <= as_expr(categories),
                "multinomial: without replacement, expected num_samples <= the categories")
        race = ops.div(ops.neg(_log_open(uniform01(shape_of(a), compute, device_of(a)))),
                       weights)
        _, indices = decomposition_for(torch.topk)(race, num_samples, -1, False, True)
        return indices
    cdf = decomposition_for(torch.cumsum)(weights, len(batch))
    total = decomposition_for(torch.sum)(weights, len(batch), True)       # (*batch, 1)
    u, total = broadcast_tensors(uniform01((*batch, num_samples), compute, device_of(a)), total)
    full_shape = (*batch, num_samples, categories)
    cdf = broadcast_to(unsqueeze(cdf, len(batch)), full_shape)
    u = broadcast_to(unsqueeze(ops.mul(u, total), len(batch) + 1), full_shape)
    below = decomposition_for(torch.sum)(convert(ops.le(cdf, u), torch.int64), len(batch) + 1)
    return ops.minimum(below, categories - 1)


# ------------------------------------------------------------------ dropout variants
ALPHA = 1.7580993408473766  # SELU's scale * alpha: alpha dropout's dropped value is -ALPHA


def _dropout_like(input, p, train, name, feature, alpha):
    """feature_dropout / alpha_dropout / feature_alpha_dropout: a keep-mask with P(keep) = 1-p
    (per (batch, channel) for the feature variants), then x / (1-p), or alpha dropout's affine
    a * (x * keep - ALPHA * (1 - keep)) + ALPHA * a * p, which keeps SELU's mean and variance."""
    trivial = dropout_without_draws(input, p, train, name)
    if trivial is not None:
        return trivial
    shape = shape_of(input)
    if feature and len(shape) < 2:
        raise PrimError(f"{name}: expected an input of 2 or more dims, found {shape}")
    mask_shape = (*shape[:2], *[1] * (len(shape) - 2)) if feature else shape
    keep = broadcast_to(dropout_mask(mask_shape, p, device_of(input)), shape)
    x = convert(input, _compute(input.dtype))
    if not alpha:
        return convert(ops.where(keep, ops.mul(x, 1.0 / (1.0 - p)), 0.0), input.dtype)
    a = 1.0 / math.sqrt((ALPHA * ALPHA * p + 1) * (1 - p))
    kept = ops.add(ops.mul(x, a), ALPHA * a * p)
    return convert(ops.where(keep, kept, ALPHA * a * (p - 1)), input.dtype)


def _dropout_variant(name, feature, alpha):
    def decomposition(input, p, train):
        return _dropout_like(input, p, train, name, feature, alpha)

    return decomposition


register_decomposition(torch.feature_dropout)(
    _dropout_variant("feature_dropout", feature=True, alpha=False))
register_decomposition(torch.alpha_dropout)(
    _dropout_variant("alpha_dropout", feature=False, alpha=True))
register_decomposition(torch.feature_alpha_dropout)(
    _dropout_variant("feature_alpha_dropout", feature=True, alpha=True))
