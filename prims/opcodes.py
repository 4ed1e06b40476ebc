"""PrimOp: every prim's name as one enum member, and the named families of prims.

Every table keyed by prim (the prims registry, VJP rules, lowerings, each backend's kernel ops,
the reduction identities) is keyed on a `PrimOp`, so a name that is not a prim fails where it is
registered. Members are `str`s equal to the prim's name (`PrimOp.EXPM1 == "expm1"`).

    >>> PrimOp("expm1") in UNARY, PrimOp.AMAX in REDUCTIONS
    (True, True)
"""

from __future__ import annotations

import enum


class PrimOp(enum.StrEnum):
    # unary pointwise
    ABS = "abs"
    NEG = "neg"
    EXP = "exp"
    EXP2 = "exp2"
    LOG = "log"
    LOG2 = "log2"
    LOG1P = "log1p"
    EXPM1 = "expm1"
    SQRT = "sqrt"
    RSQRT = "rsqrt"
    SIN = "sin"
    COS = "cos"
    TAN = "tan"
    TANH = "tanh"
    ERF = "erf"
    SIGMOID = "sigmoid"
    RECIPROCAL = "reciprocal"
    SIGN = "sign"
    FLOOR = "floor"
    CEIL = "ceil"
    ROUND = "round"
    TRUNC = "trunc"
    LOGICAL_NOT = "logical_not"
    BITWISE_NOT = "bitwise_not"
    ISNAN = "isnan"
    ISINF = "isinf"
    STOP_GRADIENT = "stop_gradient"
    # binary pointwise
    ADD = "add"
    SUB = "sub"
    MUL = "mul"
    DIV = "div"
    FLOOR_DIVIDE = "floor_divide"
    REMAINDER = "remainder"
    POW = "pow"
    MAXIMUM = "maximum"
    MINIMUM = "minimum"
    ATAN2 = "atan2"
    LOGICAL_AND = "logical_and"
    LOGICAL_OR = "logical_or"
    LOGICAL_XOR = "logical_xor"
    BITWISE_AND = "bitwise_and"
    BITWISE_OR = "bitwise_or"
    BITWISE_XOR = "bitwise_xor"
    # comparisons
    EQ = "eq"
    NE = "ne"
    LT = "lt"
    LE = "le"
    GT = "gt"
    GE = "ge"
    # other pointwise
    WHERE = "where"
    CONVERT_ELEMENT_TYPE = "convert_element_type"
    # reductions
    SUM = "sum"
    PROD = "prod"
    AMAX = "amax"
    AMIN = "amin"
    ANY = "any"
    ALL = "all"
    ARGMAX = "argmax"
    ARGMIN = "argmin"
    VAR_MEAN = "var_mean"
    # views
    BROADCAST_IN_DIM = "broadcast_in_dim"
    RESHAPE = "reshape"
    PERMUTE = "permute"
    SLICE = "slice"
    SQUEEZE = "squeeze"
    FLIP = "flip"
    CAT = "cat"
    PAD = "pad"
    # indexing
    GATHER = "gather"
    INDEX_SELECT = "index_select"
    SCATTER_ADD = "scatter_add"
    INDEX_PUT = "index_put"
    # creation, random
    IOTA = "iota"
    FULL = "full"
    PHILOX_RAND = "philox_rand"
    # scans
    CUMSUM = "cumsum"
    CUMPROD = "cumprod"
    # externs
    MM = "mm"
    BMM = "bmm"
    SDPA = "sdpa"
    SDPA_BACKWARD = "sdpa_backward"
    SDPA_DROPOUT = "sdpa_dropout"
    SDPA_DROPOUT_BACKWARD = "sdpa_dropout_backward"
    SORT = "sort"
    TOPK = "topk"
    CONVOLUTION = "convolution"
    CONVOLUTION_BACKWARD = "convolution_backward"
    TORCH_EXTERN = "torch_extern"
    TORCH_EXTERN_BACKWARD = "torch_extern_backward"


P = PrimOp

# Unary math that computes in floating point (an integer input is converted first).
FLOAT_UNARY = frozenset({P.EXP, P.EXP2, P.LOG, P.LOG2, P.LOG1P, P.EXPM1, P.SQRT, P.RSQRT, P.SIN,
                         P.COS, P.TAN, P.TANH, P.ERF, P.SIGMOID, P.RECIPROCAL})
# Rounding: the identity on integers.
ROUNDING = frozenset({P.FLOOR, P.CEIL, P.ROUND, P.TRUNC})
UNARY = FLOAT_UNARY | ROUNDING | {P.ABS, P.NEG, P.SIGN, P.LOGICAL_NOT, P.BITWISE_NOT, P.ISNAN,
                                  P.ISINF, P.STOP_GRADIENT}
LOGICAL = frozenset({P.LOGICAL_AND, P.LOGICAL_OR, P.LOGICAL_XOR})
BINARY = LOGICAL | {P.ADD, P.SUB, P.MUL, P.DIV, P.FLOOR_DIVIDE, P.REMAINDER, P.POW, P.MAXIMUM,
                    P.MINIMUM, P.ATAN2, P.BITWISE_AND, P.BITWISE_OR, P.BITWISE_XOR}
COMPARISONS = frozenset({P.EQ, P.NE, P.LT, P.LE, P.GT, P.GE})
POINTWISE = UNARY | BINARY | COMPARISONS | {P.WHERE, P.CONVERT_ELEMENT_TYPE}
REDUCTIONS = frozenset({P.SUM, P.PROD, P.AMAX, P.AMIN, P.ANY, P.ALL, P.ARGMAX, P.ARGMIN,
                        P.VAR_MEAN})
VIEWS = frozenset({P.BROADCAST_IN_DIM, P.RESHAPE, P.PERMUTE, P.SLICE, P.SQUEEZE, P.FLIP, P.CAT,
                   P.PAD})
INDEXING = frozenset({P.GATHER, P.INDEX_SELECT, P.SCATTER_ADD, P.INDEX_PUT})
CREATION = frozenset({P.IOTA, P.FULL})
RANDOM = frozenset({P.PHILOX_RAND})
SCANS = frozenset({P.CUMSUM, P.CUMPROD})
EXTERNS = frozenset({P.MM, P.BMM, P.SDPA, P.SDPA_BACKWARD, P.SDPA_DROPOUT, P.SDPA_DROPOUT_BACKWARD,
                     P.SORT, P.TOPK, P.CONVOLUTION, P.CONVOLUTION_BACKWARD,
                     P.TORCH_EXTERN, P.TORCH_EXTERN_BACKWARD})

FAMILIES = {
    "unary": UNARY, "binary": BINARY, "comparisons": COMPARISONS,
    "other_pointwise": frozenset({P.WHERE, P.CONVERT_ELEMENT_TYPE}), "reductions": REDUCTIONS,
    "views": VIEWS, "indexing": INDEXING, "creation": CREATION, "random": RANDOM, "scans": SCANS,
    "externs": EXTERNS,
}

assert set().union(*FAMILIES.values()) == set(PrimOp), "every PrimOp is in one family"
assert sum(map(len, FAMILIES.values())) == len(PrimOp), "no PrimOp is in two families"

