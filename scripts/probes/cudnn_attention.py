"""cuDNN attention called directly (forward + backward), against torch's flash kernels (GPU).

    source scripts/gpu_env.sh && python3 scripts/probes/cudnn_attention.py

Prints the two ops' schemas, which `attn_bias` values the cuDNN backward accepts from Python
(None, an empty tensor, ...), the gradients' difference from flash's at T = 1, 63, 64, 127,
509, 512 and 1024 (causal, with and without dropout), and GPU ms of forward + backward per
layer at B=8, H=12, D=64, T=512 and 1024 for each kernel.
"""
import sys
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from bench.attention_probe import time_ms  # noqa: E402

aten = torch.ops.aten
dev = "cuda"
B, H, D = 8, 12, 64


def schemas():
    for op in (aten._scaled_dot_product_cudnn_attention.default,
               aten._scaled_dot_product_cudnn_attention_backward.default):
        print("schema:", op._schema)


def qkvg(t, seed=0):
    g = torch.Generator(device=dev).manual_seed(seed)
    qkv = torch.randn(B, t, 3, H, D, device=dev, dtype=torch.bfloat16, generator=g)
    q, k, v = (qkv[:, :, i].transpose(1, 2) for i in range(3))
    go = torch.randn(B, H, t, D, device=dev, dtype=torch.bfloat16, generator=g)
    return q, k, v, go


def flash(q, k, v, go, p):
    t = q.shape[2]
    out, lse, _, _, _, _, st, un, _ = aten._scaled_dot_product_flash_attention(q, k, v, p, True, False)
    grads = aten._scaled_dot_product_flash_attention_backward(
        go, q, k, v, out, lse, None, None, t, t, p, True, st, un)
    return out, grads


def cudnn(q, k, v, go, p, bias_value):
    out, lse, cq, ck, mq, mk, seed, off, _ = aten._scaled_dot_product_cudnn_attention(
        q, k, v, None, True, p, True, False)
    grads = aten._scaled_dot_product_cudnn_attention_backward(
        go, q, k, v, out, lse, seed, off, bias_value(), cq, ck, mq, mk, p, True)
    return out, grads


BIASES = {"None": lambda: None, "empty(0)": lambda: torch.empty(0, device=dev),
          "empty(0,bf16)": lambda: torch.empty(0, device=dev, dtype=torch.bfloat16),
          "Tensor()": lambda: torch.Tensor()}


def which_bias():
    q, k, v, go = qkvg(64)
    ok = []
    for name, fn in BIASES.items():
        try:
            cudnn(q, k, v, go, 0.0, fn)
            torch.cuda.synchronize()
            ok.append(name)
            print(f"bias {name}: accepted")
        except Exception as e:  # noqa: BLE001
            print(f"bias {name}: {type(e).__name__}: {str(e)[:240]}")
    return ok


def describe():
    q, k, v, go = qkvg(64)
    res = aten._scaled_dot_product_cudnn_attention(q, k, v, None, True, 0.1, True, False)
    for name, x in zip(("out", "lse", "cum_q", "cum_k", "max_q", "max_k", "seed", "offset",
                        "debug"), res):
        if isinstance(x, torch.Tensor):
            print(f"cudnn {name}: shape {tuple(x.shape)} stride {tuple(x.stride())} {x.dtype} "
                  f"{x.device}")
        else:
            print(f"cudnn {name}: {x!r}")
    for t in (1, 2, 63, 64, 509, 512, 1024):
        q, k, v, go = qkvg(t)
        print(f"T={t}: torch's choice p=0 {torch._fused_sdp_choice(q, k, v, None, 0.0, True)}, "
              f"p=0.1 {torch._fused_sdp_choice(q, k, v, None, 0.1, True)}")


def compare(bias_name):
    for t in (2, 63, 64, 127, 509, 512, 1024):
        q, k, v, go = qkvg(t, seed=t)
        fo, fg = flash(q, k, v, go, 0.0)
        try:
            co, cg = cudnn(q, k, v, go, 0.0, BIASES[bias_name])
        except Exception as e:  # noqa: BLE001
            print(f"T={t}: cudnn failed: {str(e)[:200]}")
            continue
        diffs = [(a.float() - b.float()).abs().max().item() for a, b in zip((fo, *fg), (co, *cg))]
        nan = any(x.isnan().any().item() for x in (co, *cg))
        print(f"T={t}: max |flash - cudnn| out/dq/dk/dv = {[f'{d:.3g}' for d in diffs]} nan={nan} "
              f"out strides {tuple(co.stride())} dq strides {tuple(cg[0].stride())}")


def speed(bias_name):
    for t in (512, 1024):
        q, k, v, go = qkvg(t)
        for p in (0.0, 0.1):
            f = time_ms(lambda: flash(q, k, v, go, p))
            c = time_ms(lambda: cudnn(q, k, v, go, p, BIASES[bias_name]))
            print(f"T={t} dropout={p}: flash {f:.3f} ms, cudnn {c:.3f} ms per layer fwd+bwd "
                  f"(cudnn/flash {c / f:.2f})")


if __name__ == "__main__":
    print(torch.__version__, torch.backends.cudnn.version(), torch.cuda.get_device_name(0))
    schemas()
    accepted = which_bias()
    describe()
    if accepted:
        compare(accepted[0])
        speed(accepted[0])
