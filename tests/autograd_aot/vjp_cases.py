"""One or more sample programs per differentiable prim, for the VJP tests.

Each case is `fn(d, n, make) -> output(s)`: `d` is the size (int or symbol with hint n), `make`
gives inputs. Run on real tensors it is the reference function torch.autograd differentiates.
"""

from __future__ import annotations

import torch

from prims import ops

CASES: dict[str, object] = {}


def case(name):
    def register(fn):
        CASES[name] = fn
        return fn

    return register


UNARY = {
    "abs": "randn", "neg": "randn", "exp": "randn", "exp2": "randn", "log": "positive",
    "log2": "positive", "log1p": "positive", "expm1": "randn", "sqrt": "positive",
    "rsqrt": "positive", "sin": "randn", "cos": "randn", "tan": "unit", "tanh": "randn",
    "erf": "randn", "sigmoid": "randn", "reciprocal": "positive", "sign": "randn",
    "floor": "randn", "ceil": "randn", "round": "randn", "trunc": "randn",
}


def _unary(name, kind):
    def fn(d, n, make):
        return getattr(ops, name)(make((d, 3), kind))

    return fn


for _name, _kind in UNARY.items():
    case(_name)(_unary(_name, _kind))

BINARY = {
    "add": ("randn", "randn"), "sub": ("randn", "randn"), "mul": ("randn", "randn"),
    "div": ("randn", "positive"), "pow": ("positive", "randn"), "maximum": ("distinct", "randn"),
    "minimum": ("distinct", "randn"), "atan2": ("randn", "positive"),
    "remainder": ("randn", "positive"),
}


def _binary(name, ka, kb):
    def fn(d, n, make):
        return getattr(ops, name)(make((d, 3), ka), make((d, 3), kb))

    return fn


for _name, (_ka, _kb) in BINARY.items():
    case(_name)(_binary(_name, _ka, _kb))


@case("add_scalar")
def _(d, n, make):
    return ops.add(2.5, make((d, 2)))


@case("div_scalar_numerator")
def _(d, n, make):
    return ops.div(1.5, make((d, 2), "positive"))


@case("pow_scalar_exponent")
def _(d, n, make):
    return ops.pow(make((d, 2), "positive"), 2.5)


@case("pow_scalar_base")
def _(d, n, make):
    return ops.pow(1.7, make((d, 2)))


@case("maximum_scalar")
def _(d, n, make):
    return ops.maximum(make((d, 3)), 0.1)


@case("where")
def _(d, n, make):
    return ops.where(make((d, 3), "bool"), make((d, 3)), make((d, 3)))


@case("where_scalar")
def _(d, n, make):
    return ops.where(make((d, 3), "bool"), make((d, 3)), 0.0)


@case("convert_element_type")
def _(d, n, make):
    return ops.convert_element_type(make((d, 3)), torch.float32)


@case("sum")
def _(d, n, make):
    return ops.sum(make((d, 4, 3)), (0, 2))


@case("sum_all")
def _(d, n, make):
    return ops.sum(make((d, 3)), (0, 1))


@case("prod")
def _(d, n, make):
    return ops.prod(make((d, 3), "positive"), (1,))


@case("amax")
def _(d, n, make):
    return ops.amax(make((d, 5), "distinct"), (1,))


@case("amin")
def _(d, n, make):
    return ops.amin(make((d, 5), "distinct"), (0,))


@case("var_mean")
def _(d, n, make):
    return ops.var_mean(make((d, 4)), (1,), 1)


@case("var_mean_dim0_unbiased0")
def _(d, n, make):
    return ops.var_mean(make((d, 4)), (0,), 0)


@case("broadcast_in_dim")
def _(d, n, make):
    return ops.broadcast_in_dim(make((4,)), (d, 2, 4), (2,))


@case("broadcast_in_dim_stretch_one")
def _(d, n, make):
    return ops.broadcast_in_dim(make((d, 1)), (d, 4), (0, 1))


@case("reshape")
def _(d, n, make):
    return ops.reshape(make((d, 6)), (d, 2, 3))


@case("permute")
def _(d, n, make):
    return ops.permute(make((d, 3, 2)), (2, 0, 1))


@case("slice")
def _(d, n, make):
    return ops.slice(make((d + 4, 3)), 0, 1, d + 3, 1)


@case("slice_step")
def _(d, n, make):
    return ops.slice(make((2 * d + 1, 3)), 0, 1, 2 * d + 1, 2)


@case("squeeze")
def _(d, n, make):
    return ops.squeeze(make((d, 1, 3)), (1,))


@case("flip")
def _(d, n, make):
    return ops.flip(make((d, 3)), (0, 1))


@case("cat")
def _(d, n, make):
    return ops.cat((make((d, 3)), make((2, 3)), make((d, 3))), 0)


@case("pad")
def _(d, n, make):
    return ops.pad(make((d, 3)), ((1, 2), (0, 1)), 0.0)


@case("gather")
def _(d, n, make):
    return ops.gather(make((d, 5)), 1, make((d, 3), "index", high=5))


@case("index_select")
def _(d, n, make):
    return ops.index_select(make((d, 4)), 0, make((7,), "index", high=n))


@case("scatter_add")
def _(d, n, make):
    return ops.scatter_add(make((d, 4)), 1, make((d, 2), "index", high=4), make((d, 2)))


@case("index_put_accumulate")
def _(d, n, make):
    return ops.index_put(make((d, 4)), (make((5,), "index", high=n),), make((5, 4)), True)


@case("index_put")
def _(d, n, make):
    k = min(n, 2)
    return ops.index_put(make((d, 4)), (make((k,), "perm", high=n),), make((k, 4)), False)


@case("sort")
def _(d, n, make):
    return ops.sort(make((d, 5), "distinct"), 1, False)[0]


@case("topk")
def _(d, n, make):
    return ops.topk(make((d, 5), "distinct"), 2, 1, True)[0]


@case("cumsum")
def _(d, n, make):
    return ops.cumsum(make((d, 4)), 0)


@case("cumprod")
def _(d, n, make):
    return ops.cumprod(make((d, 4), "positive"), 1)


@case("mm")
def _(d, n, make):
    return ops.mm(make((d, 3)), make((3, 4)))


@case("bmm")
def _(d, n, make):
    return ops.bmm(make((2, d, 3)), make((2, 3, 4)))


@case("convolution")
def _(d, n, make):
    return ops.convolution(make((2, 3, d + 2)), make((4, 3, 3)), make((4,)), (1,), (1,), (1,),
                           False, (0,), 1)


@case("convolution_transposed_strided")
def _(d, n, make):
    return ops.convolution(make((1, 3, d)), make((3, 2, 3)), None, (2,), (1,), (1,), True,
                           (1,), 1)


@case("sdpa")
def _(d, n, make):
    q, k, v = make((1, 2, d, 4)), make((1, 2, d, 4)), make((1, 2, d, 4))
    return ops.sdpa(q, k, v, None, 0.0, False, None, None, 0)


@case("sdpa_causal")
def _(d, n, make):
    q, k, v = make((1, 2, d, 4)), make((1, 2, d, 4)), make((1, 2, d, 4))
    return ops.sdpa(q, k, v, None, 0.0, True, 0.3, None, 0)


@case("two_outputs_var_mean")
def _(d, n, make):
    var, mean = ops.var_mean(make((d, 4)), (1,), 1)
    return var, mean


@case("sdpa_dropout")
def _(d, n, make):
    q, k, v = make((1, 2, d, 4)), make((1, 2, d, 4)), make((1, 2, d, 4))
    seed = make((), "index", high=10**6)
    return ops.sdpa(q, k, v, None, 0.25, True, None, seed, 7)


@case("sdpa_dropout_fused")
def _(d, n, make):
    q, k, v = make((1, 2, d, 8)), make((1, 2, d, 8)), make((1, 2, d, 8))
    seed = make((), "index", high=10**6)
    out, _, _ = ops.sdpa_dropout(q, k, v, 0.25, True, None, seed, 7)
    return out


@case("prod_with_zeros")
def _(d, n, make):
    return ops.prod(make((d, 4), "with_zeros"), (1,))


@case("torch_extern")
def _(d, n, make):
    return ops.torch_extern("special.i1e", (make((d, 3)),), ())


@case("torch_extern_batched_det")
def _(d, n, make):
    return ops.torch_extern("linalg.det", (make((2, d, d)),), ())
