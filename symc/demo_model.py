"""The byte-level GPT that `symc demo` trains: a small pre-LN decoder over 256 byte values.

    model = DemoGPT(DemoConfig(n_layer=2, n_embd=64))
    logits, loss = model(idx, targets)          # idx: (B, T) int64 bytes, T <= block_size
    text = model.generate_text(b"Alice ", 80)   # greedy/temperature sampling, plain eager
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch
import torch.nn as nn
import torch.nn.functional as F


@dataclass
class DemoConfig:
    vocab_size: int = 256  # bytes
    block_size: int = 256
    n_layer: int = 3
    n_head: int = 4
    n_embd: int = 64
    dropout: float = 0.0


class SelfAttention(nn.Module):
    def __init__(self, config: DemoConfig):
        super().__init__()
        self.qkv = nn.Linear(config.n_embd, 3 * config.n_embd)
        self.proj = nn.Linear(config.n_embd, config.n_embd)
        self.n_head = config.n_head
        self.dropout = config.dropout

    def forward(self, x):
        B, T, C = x.shape
        q, k, v = self.qkv(x).split(C, dim=2)
        q = q.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        k = k.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        v = v.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        y = F.scaled_dot_product_attention(
            q, k, v, dropout_p=self.dropout if self.training else 0.0, is_causal=True)
        return self.proj(y.transpose(1, 2).contiguous().view(B, T, C))


class Block(nn.Module):
    def __init__(self, config: DemoConfig):
        super().__init__()
        self.ln1 = nn.LayerNorm(config.n_embd)
        self.attn = SelfAttention(config)
        self.ln2 = nn.LayerNorm(config.n_embd)
        self.fc = nn.Linear(config.n_embd, 4 * config.n_embd)
        self.out = nn.Linear(4 * config.n_embd, config.n_embd)
        self.drop = nn.Dropout(config.dropout)

    def forward(self, x):
        x = x + self.drop(self.attn(self.ln1(x)))
        return x + self.drop(self.out(F.gelu(self.fc(self.ln2(x)))))


class DemoGPT(nn.Module):
    def __init__(self, config: DemoConfig):
        super().__init__()
        self.config = config
        self.tok = nn.Embedding(config.vocab_size, config.n_embd)
        self.pos = nn.Embedding(config.block_size, config.n_embd)
        self.blocks = nn.ModuleList([Block(config) for _ in range(config.n_layer)])
        self.ln_f = nn.LayerNorm(config.n_embd)
        self.head = nn.Linear(config.n_embd, config.vocab_size, bias=False)
        self.head.weight = self.tok.weight
        for name, p in self.named_parameters():
            if p.dim() >= 2:
                std = 0.02 / math.sqrt(2 * config.n_layer) if name.endswith("out.weight") else 0.02
                nn.init.normal_(p, mean=0.0, std=std)
            elif name.endswith("bias"):
                nn.init.zeros_(p)

    def forward(self, idx, targets=None):
        _, t = idx.shape
        pos = torch.arange(t, device=idx.device)
        x = self.tok(idx) + self.pos(pos)
        for block in self.blocks:
            x = block(x)
        logits = self.head(self.ln_f(x))
        loss = None
        if targets is not None:
            loss = F.cross_entropy(logits.view(-1, logits.size(-1)), targets.reshape(-1))
        return logits, loss

    @torch.no_grad()
    def generate_text(self, prompt: bytes, n_bytes: int, temperature: float = 0.8,
                      seed: int = 0) -> str:
        """Continue `prompt` by `n_bytes` sampled bytes (eager; never compiled)."""
        was_training = self.training
        self.eval()
        device = self.tok.weight.device
        g = torch.Generator(device="cpu").manual_seed(seed)
        idx = torch.tensor([list(prompt)], dtype=torch.long, device=device)
        for _ in range(n_bytes):
            logits, _ = self(idx[:, -self.config.block_size:])
            probs = F.softmax(logits[0, -1].float().cpu() / temperature, dim=-1)
            nxt = torch.multinomial(probs, 1, generator=g).to(device)
            idx = torch.cat([idx, nxt[None]], dim=1)
        self.train(was_training)
        return bytes(idx[0].tolist()).decode("utf-8", errors="replace")
