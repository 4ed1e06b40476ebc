"""Autocast as explicit converts: CUDA autocast's casts decided at decomposition (metas only,
so this runs without a GPU; the GPU benchmark checks the numbers against eager autocast)."""

from __future__ import annotations

import operator

import pytest
import torch
import torch.nn.functional as F

from prims import PrimError, autocast_state, infer_meta
from symbolic import LocalSource, ShapeEnv, TensorMeta

BF16, F32, F64 = torch.bfloat16, torch.float32, torch.float64
CUDA_BF16 = {"cuda": BF16}


def _meta(env, shape, dtype=F32, device="cuda"):
    sizes = tuple(env.create_symbol(s, LocalSource(f"x{i}_{s}")) if s > 1 else s
                  for i, s in enumerate(shape))
    return TensorMeta.contiguous(sizes, dtype, torch.device(device))


@pytest.mark.parametrize("target", [F.linear, torch.matmul, operator.matmul, torch.Tensor.mm])
def test_matrix_products_run_in_the_autocast_dtype(target):
    env = ShapeEnv()
    x, w = _meta(env, (5, 8)), TensorMeta.contiguous((8, 8), F32, torch.device("cuda"))
    with autocast_state(CUDA_BF16):
        out = infer_meta(target, (x, w), {}, env)
    assert out.dtype == BF16
    assert infer_meta(target, (x, w), {}, env).dtype == F32  # autocast off: unchanged


@pytest.mark.parametrize("target, args", [
    (F.softmax, (-1,)), (F.log_softmax, (-1,)), (torch.sum, ()), (torch.exp, ()),
    (torch.Tensor.pow, (2,)), (F.layer_norm, ((7,),)),
])
def test_float32_list_ops_upcast_lower_precision_inputs(target, args):
    env = ShapeEnv()
    x = _meta(env, (3, 7), BF16)
    with autocast_state(CUDA_BF16):
        assert infer_meta(target, (x, *args), {}, env).dtype == F32


def test_ops_on_neither_list_keep_their_dtype_and_float64_is_never_cast():
    env = ShapeEnv()
    x = _meta(env, (3, 7), BF16)
    d = _meta(env, (3, 7), F64)
    with autocast_state(CUDA_BF16):
        assert infer_meta(F.gelu, (x,), {}, env).dtype == BF16
        assert infer_meta(torch.add, (x, x), {}, env).dtype == BF16
        assert infer_meta(torch.matmul, (d, _meta(env, (7, 2), F64)), {}, env).dtype == F64


def test_cpu_autocast_is_refused_not_guessed():
    env = ShapeEnv()
    x = _meta(env, (3, 7), F32, device="cpu")
    with autocast_state({"cpu": BF16}), pytest.raises(PrimError, match="autocast on cpu"):
        infer_meta(torch.add, (x, x), {}, env)


def test_cuda_autocast_leaves_cpu_tensors_alone():
    env = ShapeEnv()
    x = _meta(env, (3, 7), F32, device="cpu")
    with autocast_state(CUDA_BF16):
        assert infer_meta(torch.matmul, (x, _meta(env, (7, 2), F32, "cpu")), {}, env).dtype == F32
