"""The construct table: each small function compiles once and matches eager at several sizes.

Sizes: the first call sets the hints (5), then 1, a prime (7) and a size above the first hint
(13). Break cases assert that the break is recorded with its reason and line, and that results
still equal eager.
"""

from __future__ import annotations

import pytest
import torch

import symc
import constructs as c

SIZES = (5, 1, 7, 13)


def mat(n):
    return (torch.randn(n, 4),)


def mat6(n):
    return (torch.randn(n, 6),)


def square(n):
    return (torch.randn(n, n),)


def pair(n):
    return ([torch.randn(n, 4), torch.randn(n, 4)],)


def named(n):
    return ({"a": torch.randn(n, 3), "b": torch.randn(n, 3)},)


def tup(n):
    return ((torch.randn(n, 2), torch.randn(n, 2)),)


# (function, inputs, expected compiles over SIZES)
POSITIVE = [
    (c.add, mat, 1), (c.radd, mat, 1), (c.sub_neg, mat, 1), (c.div_pow, mat, 1),
    (c.matmul_op, mat, 1), (c.torch_fns, mat, 1), (c.tensor_methods, mat, 1),
    (c.functional, mat, 1), (c.softmax_dim, mat, 1), (c.comparisons_tensor, mat, 1),
    (c.where_fn, mat, 1), (c.keyword_args, mat, 1), (c.reductions, mat, 1),
    (c.unary_ops, mat, 1), (c.next_of_generator, mat, 1),
    (c.shape_index, mat, 1), (c.size_call, mat, 1), (c.len_tensor, mat, 1),
    (c.int_of_size, mat, 1), (c.size_arith, mat, 1), (c.shape_unpack_star, mat, 1),
    (c.size_return, mat, 1), (c.numel_fn, mat, 1), (c.size_float, mat, 1),
    (c.size_branch_static, mat, 1), (c.size_max_min, mat, 1), (c.size_compare_chain, mat, 1),
    (c.shape_eq, mat, 1), (c.arange_size, mat, 1), (c.new_zeros_size, mat, 1),
    (c.ones_like, mat, 1), (c.assert_size, mat, 1), (c.dim_ndim, mat, 1),
    (c.build_tuple, mat, 1), (c.build_list_index, mat, 1), (c.list_append_loop, mat, 1),
    (c.dict_build_get, mat, 1), (c.dict_items_loop, mat, 1), (c.unpack_tuple, mat, 1),
    (c.unpack_ex, mat, 1), (c.tuple_concat, mat, 1), (c.list_comprehension, mat, 1),
    (c.dict_comprehension, mat, 1), (c.nested_comprehension, mat, 1),
    (c.return_dict, mat, 1), (c.return_nested, mat, 1), (c.slices_list, mat, 1),
    # Two independent batch symbols broadcast together, equal at the example: the guard
    # `s0 == s2` covers size 1 for both, so one entry serves every size.
    (c.input_list, pair, 1), (c.input_dict, named, 1), (c.input_tuple_unpack, tup, 1),
    (c.enumerate_zip, mat, 1), (c.dict_update, mat, 1), (c.contains_op, mat, 1),
    (c.list_extend_pop, mat, 1),
    (c.if_const, mat, 1), (c.global_dict_flag, mat, 1), (c.while_loop, mat, 1),
    (c.for_range_unroll, mat, 1), (c.for_over_tensor_list, mat, 1),
    (c.break_continue, mat, 1), (c.ternary, mat, 1), (c.and_or, mat, 1),
    (c.is_none_branch, mat, 1), (c.try_finally, mat, 1), (c.try_except_noraise, mat, 1),
    (c.isinstance_check, mat, 1), (c.fstring, mat, 1), (c.with_no_grad, mat, 1),
    (c.with_null_context, mat, 1),
    (c.nested_if, mat, 1), (c.builtin_misc, mat, 1), (c.math_fns, mat, 1),
    (c.getattr_hasattr, mat, 1), (c.bool_int_float, mat, 1),
    (c.tuple_list_conversion, mat, 1),
    (c.call_helper_defaults, mat, 1), (c.call_helper_kwargs, mat, 1),
    (c.call_star_args, mat, 1), (c.closure_fn, mat, 1), (c.closure_mutation, mat, 1),
    (c.lambda_fn, mat, 1), (c.recursion_depth, mat, 1), (c.config_read, mat, 1),
    (c.dataclass_output, mat, 1), (c.namedtuple_output, mat, 1), (c.namedtuple_use, mat, 1),
    (c.dataclass_build_local, mat, 1), (c.method_of_object, mat, 1),
    (c.super_call, mat, 1), (c.module_super_forward, mat, 1), (c.model_output, mat, 1),
    (c.inplace_method, mat, 1), (c.inplace_operator, mat, 1), (c.mutate_input, mat, 1),
    (c.setitem_slice, mat, 1), (c.setitem_row_tensor, mat, 1), (c.setitem_mask, mat, 1),
    (c.getitem_basic, mat, 1), (c.getitem_ellipsis, mat, 1), (c.getitem_symbolic, mat, 1),
    (c.index_tensor, mat, 1), (c.gather_like, mat, 1), (c.cat_stack, mat, 1),
    (c.split_view, mat6, 1), (c.type_conversions, mat, 1), (c.dtype_checks, mat, 1),
    (c.device_read, mat, 1),
]

BREAKS = [
    (c.break_item, "item"), (c.break_tensor_branch, "data-dependent branch"),
    (c.break_print, "side effects"), (c.break_global_write, "global"),
    (c.break_raise, "raise"), (c.break_tolist, "tolist"), (c.break_attr_write, "attribute"),
    (c.break_input_list_mutation, "side effect"), (c.break_generator, "next"),
    (c.break_autocast, "autocast"), (c.break_unknown_object_call, "_Opaque"),
    (c.break_mask_index, "boolean mask"),
    (c.break_in_null_context, "nullcontext()` block is not resumed"),
]


def assert_same(actual, expected):
    if isinstance(expected, torch.Tensor):
        assert isinstance(actual, torch.Tensor), f"expected a tensor, got {actual!r}"
        assert actual.shape == expected.shape and actual.dtype == expected.dtype
        torch.testing.assert_close(actual, expected, equal_nan=True)
    elif isinstance(expected, (tuple, list)):
        assert type(actual) is type(expected) and len(actual) == len(expected)
        for a, e in zip(actual, expected):
            assert_same(a, e)
    elif hasattr(expected, "__dataclass_fields__"):
        assert type(actual) is type(expected)
        for key in expected.__dataclass_fields__:
            assert_same(getattr(actual, key), getattr(expected, key))
    elif isinstance(expected, dict):
        assert list(actual) == list(expected)
        for key in expected:
            assert_same(actual[key], expected[key])
    elif hasattr(expected, "__dataclass_fields__"):
        assert type(actual) is type(expected)
        for key in expected.__dataclass_fields__:
            assert_same(getattr(actual, key), getattr(expected, key))
    else:
        assert actual == expected


def clone(args):
    return tuple(_clone(a) for a in args)


def _clone(value):
    if isinstance(value, torch.Tensor):
        return value.clone()
    if isinstance(value, (list, tuple)):
        return type(value)(_clone(v) for v in value)
    if isinstance(value, dict):
        return {k: _clone(v) for k, v in value.items()}
    return value


@pytest.mark.parametrize("fn, make, compiles", POSITIVE, ids=[f[0].__name__ for f in POSITIVE])
def test_construct_matches_eager_with_one_compile(fn, make, compiles):
    compiled = symc.compile(fn, backend="eager", fullgraph=True)
    for n in SIZES:
        torch.manual_seed(n)
        args = make(n)
        eager_args, compiled_args = clone(args), clone(args)
        expected = fn(*eager_args)
        actual = compiled(*compiled_args)
        assert_same(actual, expected)
        assert_same(compiled_args, eager_args)  # in-place writes to inputs are copied back
    report = symc.explain(compiled)
    assert report.compiles == compiles, str(report)
    assert report.graph_breaks == 0


@pytest.mark.parametrize("fn, reason", BREAKS, ids=[f[0].__name__ for f in BREAKS])
def test_break_is_recorded_and_runs_eagerly(fn, reason, capsys):
    compiled = symc.compile(fn, backend="eager")
    for n in (5, 7):
        args = make_break_args(fn, n)
        try:
            expected = fn(*clone(args))
        except Exception as exc:  # noqa: BLE001 - the compiled call must raise the same
            with pytest.raises(type(exc)):
                compiled(*clone(args))
            continue
        assert_same(compiled(*clone(args)), expected)
    report = symc.explain(compiled)
    # A split frame may break again in its resume function (`with torch.autocast` breaks at the
    # constructor, then at the with statement): the first break is the construct's.
    assert report.graph_breaks >= 1, str(report)
    brk = report.breaks[0]
    assert reason in brk.reason, brk.reason
    assert brk.where and brk.where.startswith("constructs.py:"), brk.where
    assert brk.line


def make_break_args(fn, n):
    if fn is c.break_input_list_mutation:
        return ([torch.randn(n, 3)],)
    return (torch.randn(n, 4),)


def test_fullgraph_error_shows_reason_and_line():
    compiled = symc.compile(c.break_item, backend="eager", fullgraph=True)
    with pytest.raises(symc.Unsupported) as info:
        compiled(torch.randn(3, 4))
    text = str(info.value)
    assert "item" in text and "constructs.py:" in text
    assert "x.sum().item()" in text
