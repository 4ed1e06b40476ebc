"""Every prim as a module attribute: `from prims import ops; ops.add(a, b)`.

Importing this module registers the whole table (each kind's module registers its rows).
Dims passed to prims are non-negative and already normalised by the decompositions.

    >>> ops.add(torch.ones(2), 1.0)
    tensor([2., 2.])
"""

from __future__ import annotations

from prims import (convolution, creation, externs, fused_attention, indexing, pointwise,
                   random, reductions, scans, views)
from prims.core import PRIMS
from prims.trace import getitem

_MODULES = (convolution, creation, externs, fused_attention, indexing, pointwise, random,
            reductions, scans, views)

abs = PRIMS["abs"]
neg = PRIMS["neg"]
exp = PRIMS["exp"]
exp2 = PRIMS["exp2"]
log = PRIMS["log"]
log2 = PRIMS["log2"]
log1p = PRIMS["log1p"]
expm1 = PRIMS["expm1"]
sqrt = PRIMS["sqrt"]
rsqrt = PRIMS["rsqrt"]
sin = PRIMS["sin"]
cos = PRIMS["cos"]
tan = PRIMS["tan"]
tanh = PRIMS["tanh"]
erf = PRIMS["erf"]
sigmoid = PRIMS["sigmoid"]
reciprocal = PRIMS["reciprocal"]
sign = PRIMS["sign"]
floor = PRIMS["floor"]
ceil = PRIMS["ceil"]
round = PRIMS["round"]
trunc = PRIMS["trunc"]
logical_not = PRIMS["logical_not"]
bitwise_not = PRIMS["bitwise_not"]
isnan = PRIMS["isnan"]
isinf = PRIMS["isinf"]
stop_gradient = PRIMS["stop_gradient"]
add = PRIMS["add"]
sub = PRIMS["sub"]
mul = PRIMS["mul"]
div = PRIMS["div"]
floor_divide = PRIMS["floor_divide"]
remainder = PRIMS["remainder"]
pow = PRIMS["pow"]
maximum = PRIMS["maximum"]
minimum = PRIMS["minimum"]
atan2 = PRIMS["atan2"]
eq = PRIMS["eq"]
ne = PRIMS["ne"]
lt = PRIMS["lt"]
le = PRIMS["le"]
gt = PRIMS["gt"]
ge = PRIMS["ge"]
logical_and = PRIMS["logical_and"]
logical_or = PRIMS["logical_or"]
logical_xor = PRIMS["logical_xor"]
bitwise_and = PRIMS["bitwise_and"]
bitwise_or = PRIMS["bitwise_or"]
bitwise_xor = PRIMS["bitwise_xor"]
where = PRIMS["where"]
convert_element_type = PRIMS["convert_element_type"]
sum = PRIMS["sum"]
prod = PRIMS["prod"]
amax = PRIMS["amax"]
amin = PRIMS["amin"]
any = PRIMS["any"]
all = PRIMS["all"]
argmax = PRIMS["argmax"]
argmin = PRIMS["argmin"]
var_mean = PRIMS["var_mean"]
broadcast_in_dim = PRIMS["broadcast_in_dim"]
reshape = PRIMS["reshape"]
permute = PRIMS["permute"]
slice = PRIMS["slice"]
squeeze = PRIMS["squeeze"]
flip = PRIMS["flip"]
cat = PRIMS["cat"]
pad = PRIMS["pad"]
gather = PRIMS["gather"]
index_select = PRIMS["index_select"]
scatter_add = PRIMS["scatter_add"]
index_put = PRIMS["index_put"]
iota = PRIMS["iota"]
full = PRIMS["full"]
philox_rand = PRIMS["philox_rand"]
mm = PRIMS["mm"]
bmm = PRIMS["bmm"]
sdpa = PRIMS["sdpa"]
sdpa_backward = PRIMS["sdpa_backward"]
sdpa_dropout = PRIMS["sdpa_dropout"]
sdpa_dropout_backward = PRIMS["sdpa_dropout_backward"]
sort = PRIMS["sort"]
topk = PRIMS["topk"]
cumsum = PRIMS["cumsum"]
cumprod = PRIMS["cumprod"]
convolution = PRIMS["convolution"]
convolution_backward = PRIMS["convolution_backward"]

__all__ = [
    "abs", "neg", "exp", "exp2", "log", "log2", "log1p", "expm1", "sqrt", "rsqrt", "sin", "cos",
    "tan", "tanh", "erf", "sigmoid", "reciprocal", "sign", "floor", "ceil", "round", "trunc",
    "logical_not", "bitwise_not", "isnan", "isinf", "stop_gradient", "add", "sub", "mul", "div",
    "floor_divide",
    "remainder", "pow", "maximum", "minimum", "atan2", "eq", "ne", "lt", "le", "gt", "ge",
    "logical_and", "logical_or", "logical_xor", "bitwise_and", "bitwise_or", "bitwise_xor",
    "where", "convert_element_type", "sum", "prod", "amax", "amin", "any", "all", "argmax",
    "argmin", "var_mean", "broadcast_in_dim", "reshape", "permute", "slice", "squeeze", "flip",
    "cat", "pad", "gather", "index_select", "scatter_add", "index_put", "iota", "full",
    "philox_rand", "mm", "bmm", "sdpa", "sdpa_backward", "sdpa_dropout", "sdpa_dropout_backward",
    "sort", "topk", "cumsum", "cumprod", "convolution", "convolution_backward",
    "getitem",
]
