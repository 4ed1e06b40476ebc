"""Op names as data: every table keyed by prim is keyed on PrimOp and covers the prim's family.

The tables: the prims registry, LOWERINGS, the kernel ops of each backend (Triton, C++, the
torch reference) and the reduction identities. A name that is not a prim fails where it is
registered; a pointwise or reduction prim without a handler in some backend fails here.
"""

import pytest
import sympy
import torch

from autograd_aot.vjp_rules import register_vjp
from inductor import lowerings
from inductor.codegen.cpp import kernel_source
from inductor.codegen.cpp_ops import CPP_OPS, CppOps
from inductor.codegen.triton import generate_kernel
from inductor.codegen.triton_group import GroupNode, KernelGroup
from inductor.codegen.triton_ops import TRITON_OPS, TritonOps
from inductor.ir import reduction_node
from inductor.ir_eval import TORCH_OPS, TORCH_REDUCTIONS, TorchHandler
from inductor.ops import (NO_KERNEL_OP, POINTWISE_OPS, REDUCTION_IDENTITIES, ops,
                          reduction_identity, use_handler)
from prims import PRIMS, PrimError, PrimKind, PrimOp, opcodes, register_prim
from prims.core import KIND_FAMILIES

s0, s1 = sympy.symbols("s0 s1", integer=True, positive=True)
HANDLERS = {"triton": (TRITON_OPS, TritonOps), "cpp": (CPP_OPS, CppOps),
            "reference": (TORCH_OPS, TorchHandler)}


def test_every_prim_op_is_one_registered_prim_of_its_family():
    assert set(PRIMS) == set(PrimOp)
    for op, prim in PRIMS.items():
        assert prim.op is op and prim.name == op.value
        assert op in KIND_FAMILIES[prim.kind], (op, prim.kind)


def test_families_partition_the_prim_ops():
    seen = {}
    for family, members in opcodes.FAMILIES.items():
        for op in members:
            assert op not in seen, f"{op} in {seen.get(op)} and {family}"
            seen[op] = family
    assert set(seen) == set(PrimOp)


def test_every_prim_has_one_lowering_keyed_on_its_op():
    assert set(lowerings.LOWERINGS) == set(PrimOp)
    assert all(type(op) is PrimOp for op in lowerings.LOWERINGS)


@pytest.mark.parametrize("backend", sorted(HANDLERS))
def test_every_pointwise_prim_has_a_kernel_op(backend):
    table, handler = HANDLERS[backend]
    assert set(NO_KERNEL_OP) <= opcodes.POINTWISE and all(NO_KERNEL_OP.values())
    missing = sorted(op for op in opcodes.POINTWISE if op not in table and op not in NO_KERNEL_OP)
    assert not missing, f"{backend}: no kernel op for {missing}"
    assert set(table) == POINTWISE_OPS, sorted(set(table) ^ POINTWISE_OPS)
    if backend != "reference":  # a method entry is the method ops.<name> calls
        for op, rule in table.items():
            assert isinstance(rule, str) or getattr(handler, op.value) is rule, op


@pytest.mark.parametrize("op", sorted(opcodes.REDUCTIONS))
def test_every_reduction_prim_has_an_identity_and_a_reference(op):
    assert op in REDUCTION_IDENTITIES and op in TORCH_REDUCTIONS


def _row_reduction(op: PrimOp, dtype, out_dtype) -> KernelGroup:
    def body(ops, x, r):
        value = ops.reduction(out_dtype, dtype, op, ops.load("a", s1 * x[0] + r[0]))
        if op == PrimOp.VAR_MEAN:
            ops.store("out", x[0], ops.div(value[1], value[2]))
        else:
            ops.store("out", x[0], value)
    return KernelGroup(f"row_{op}", (s0,), (s1,), (GroupNode(body, kind="reduction"),),
                       {"a": dtype, "out": out_dtype}, inputs=("a",), outputs=("out",),
                       symbol_args=(s0, s1))


REDUCTION_DTYPES = {PrimOp.ANY: (torch.float32, torch.bool), PrimOp.ALL: (torch.int32, torch.bool),
                    PrimOp.ARGMAX: (torch.float32, torch.int64),
                    PrimOp.ARGMIN: (torch.int32, torch.int64)}


@pytest.mark.parametrize("op", sorted(opcodes.REDUCTIONS))
def test_every_reduction_prim_generates_triton_and_cpp(op):
    dtype, out_dtype = REDUCTION_DTYPES.get(op, (torch.float32, torch.float32))
    group = _row_reduction(op, dtype, out_dtype)
    assert "def " in generate_kernel(group).source
    source, _, _ = kernel_source(group, [0])
    assert "for (int64_t r0" in source


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.int32, torch.uint8,
                                   torch.int64, torch.bool])
@pytest.mark.parametrize("op", [PrimOp.SUM, PrimOp.PROD, PrimOp.AMAX, PrimOp.AMIN, PrimOp.ANY,
                                PrimOp.ALL, PrimOp.ARGMAX, PrimOp.ARGMIN])
def test_reduction_identity_leaves_every_reduction_unchanged(op, dtype):
    if dtype == torch.bool and op in (PrimOp.SUM, PrimOp.PROD):
        pytest.skip("sum/prod of bool accumulate in int64 (the prim promotes first)")
    torch.manual_seed(0)
    x = (torch.randn(13) * 50).to(dtype)
    ident = torch.tensor([reduction_identity(op, dtype)], dtype=dtype)
    reduce = {PrimOp.SUM: torch.sum, PrimOp.PROD: torch.prod, PrimOp.AMAX: torch.amax,
              PrimOp.AMIN: torch.amin, PrimOp.ANY: torch.any, PrimOp.ALL: torch.all}
    if op in (PrimOp.ARGMAX, PrimOp.ARGMIN):  # no element loses to the identity (ties go to
        # the element: the kernels keep the identity's index at -1 / past the end)
        start, values = ident.to(torch.float64), x.to(torch.float64)
        assert bool((start <= values if op == PrimOp.ARGMAX else start >= values).all())
        return
    wide = x.double() if op in (PrimOp.SUM, PrimOp.PROD) and dtype.is_floating_point else x
    assert reduce[op](torch.cat([ident.to(wide.dtype), wide])) == reduce[op](wide)


def test_registering_an_unknown_prim_name_fails():
    with pytest.raises(PrimError, match="inductor/lowerings.py"):
        lowerings.register_lowering("expm1_fast")(lambda g, meta, a: a)
    with pytest.raises(PrimError, match="autograd_aot/vjp_rules.py"):
        register_vjp("expm1_fast", lambda args, out, g: (g,))
    with pytest.raises(PrimError, match="prims table"):
        register_prim("expm1_fast", PrimKind.POINTWISE, lambda a: a, lambda a: a)
    assert "expm1_fast" not in PRIMS and "expm1_fast" not in lowerings.LOWERINGS


def test_registering_a_second_lowering_or_a_prim_of_another_family_fails():
    before = lowerings.LOWERINGS[PrimOp.EXPM1]
    with pytest.raises(PrimError, match="second"):
        lowerings.register_lowering(PrimOp.EXPM1)(lambda g, meta, a: a)
    assert lowerings.LOWERINGS[PrimOp.EXPM1] is before
    with pytest.raises(PrimError, match="registered twice"):
        register_prim("expm1", PrimKind.POINTWISE, lambda a: a, lambda a: a)


def test_kernel_ops_have_only_the_prims_names():
    """`ops.div` and `amax`, never the old aliases `truediv`, `floordiv` or `max`."""
    handler = TorchHandler({}, {}, {}, (), ())
    with use_handler(handler):
        assert ops.div(torch.tensor(1.0), 4.0) == 0.25
        for alias in ("truediv", "floordiv", "mod", "relu"):
            with pytest.raises(AttributeError):
                getattr(ops, alias)
    with pytest.raises(ValueError, match="max"):
        reduction_node("n", (), (), (), "max", torch.float32, lambda x, r: None)


def test_pointwise_families_are_the_rows_of_the_prims_pointwise_tables():
    from prims.pointwise import BINARY_RULES, FLOAT_ONLY, UNARY_RULES
    assert set(UNARY_RULES) == opcodes.UNARY
    assert set(BINARY_RULES) == opcodes.BINARY | opcodes.COMPARISONS
    float_only = {PrimOp(name) for name, rule in UNARY_RULES.items() if rule[1] == FLOAT_ONLY}
    assert float_only == opcodes.FLOAT_UNARY
