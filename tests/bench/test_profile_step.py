"""bench/profile_step.py: kernel names land in the categories the step table reports."""

import pytest

from bench.profile_step import CATEGORIES, category, summarize


@pytest.mark.parametrize("name, expected", [
    ("k12_pw_add_mul_pointwise", "generated_pointwise"),
    ("k3_red_amax_sub_exp_looped", "generated_reduction"),
    ("k40_pw_copy_convert_pointwise", "generated_pointwise"),
    ("triton_poi_fused_add_0", "generated_pointwise"),
    ("triton_per_fused_native_layer_norm_1", "generated_reduction"),
    ("triton_red_fused_sum_2", "generated_reduction"),
    ("nvjet_sm90_tst_192x128_64x5_1x2_h_bz_coopB_NNT", "matmul"),
    ("sm90_xmma_gemm_bf16bf16_bf16f32", "matmul"),
    ("cudnn_generated_fort_native_sdpa_sm90_flash_fprop_wgmma_f16", "attention"),
    ("void pytorch_flash::flash_fwd_kernel<Flash_fwd_kernel_traits>", "attention"),
    ("Memcpy DtoD (Device -> Device)", "copies"),
    ("void at::native::unrolled_elementwise_kernel<at::native::direct_copy_kernel_cuda", "copies"),
    ("void at::native::vectorized_elementwise_kernel<8, at::native::bfloat16_copy_kernel_cuda",
     "copies"),
    ("void at::native::(anonymous namespace)::cunn_SoftMaxForward<8, c10::BFloat16>", "other"),
])
def test_category(name, expected):
    assert category(name) == expected


def test_summarize_splits_every_category():
    rows = [{"name": "a", "gpu_ms": 1.5, "calls": 2, "category": "matmul"},
            {"name": "b", "gpu_ms": 0.5, "calls": 3, "category": "copies"}]
    out = summarize(rows)
    assert out["gpu_kernel_ms"] == 2.0 and out["launches"] == 5
    assert set(out["split"]) == set(CATEGORIES)
    assert out["split"]["copies"] == {"gpu_ms": 0.5, "launches": 3}
