"""Four small team-written models in the style real model code uses, for end-to-end tests.

    GPT, BertEncoder, LlamaBlockModel, T5Small: each takes a config dataclass (`tiny()` gives a
    d=32-64, 2-layer, vocab ~100 config) and returns (logits, loss) from forward. The GPT is the
    one `symc demo` trains (symc/demo_model.py), with its tiny config.
    batch = make_batch("gpt", batch=2, seqlen=17, seed=0)   # dict of kwargs for forward
    logits, loss = GPT(GPTConfig.tiny())(**batch)
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch
import torch.nn as nn
import torch.nn.functional as F

from symc.demo_model import GPT, GPTConfig

# ----------------------------------------------------------------------------------------------
# BERT-style encoder: post-LN, additive padding mask, pooler or MLM head


@dataclass
class BertConfig:
    vocab_size: int = 100
    hidden_size: int = 64
    num_hidden_layers: int = 2
    num_attention_heads: int = 4
    intermediate_size: int = 128
    max_position_embeddings: int = 256
    type_vocab_size: int = 2
    hidden_dropout_prob: float = 0.0
    attention_probs_dropout_prob: float = 0.0
    layer_norm_eps: float = 1e-12
    head: str = "mlm"  # "mlm" (per-token logits, loss) or "pooler" (sequence classification)
    num_labels: int = 3

    @classmethod
    def tiny(cls, **overrides) -> BertConfig:
        return cls(**{"hidden_size": 32, "intermediate_size": 64, **overrides})


class BertEmbeddings(nn.Module):
    def __init__(self, config: BertConfig):
        super().__init__()
        self.word_embeddings = nn.Embedding(config.vocab_size, config.hidden_size)
        self.position_embeddings = nn.Embedding(config.max_position_embeddings, config.hidden_size)
        self.token_type_embeddings = nn.Embedding(config.type_vocab_size, config.hidden_size)
        self.LayerNorm = nn.LayerNorm(config.hidden_size, eps=config.layer_norm_eps)
        self.dropout = nn.Dropout(config.hidden_dropout_prob)

    def forward(self, input_ids, token_type_ids):
        seq_length = input_ids.shape[1]
        position_ids = torch.arange(seq_length, device=input_ids.device).unsqueeze(0)
        emb = (self.word_embeddings(input_ids) + self.position_embeddings(position_ids)
               + self.token_type_embeddings(token_type_ids))
        return self.dropout(self.LayerNorm(emb))


class BertSelfAttention(nn.Module):
    def __init__(self, config: BertConfig):
        super().__init__()
        self.num_heads = config.num_attention_heads
        self.head_dim = config.hidden_size // config.num_attention_heads
        self.query = nn.Linear(config.hidden_size, config.hidden_size)
        self.key = nn.Linear(config.hidden_size, config.hidden_size)
        self.value = nn.Linear(config.hidden_size, config.hidden_size)
        self.dropout = nn.Dropout(config.attention_probs_dropout_prob)
        self.dense = nn.Linear(config.hidden_size, config.hidden_size)
        self.out_dropout = nn.Dropout(config.hidden_dropout_prob)
        self.LayerNorm = nn.LayerNorm(config.hidden_size, eps=config.layer_norm_eps)

    def split_heads(self, x):
        new_shape = x.size()[:-1] + (self.num_heads, self.head_dim)
        return x.view(new_shape).permute(0, 2, 1, 3)

    def forward(self, hidden_states, extended_mask):
        q = self.split_heads(self.query(hidden_states))
        k = self.split_heads(self.key(hidden_states))
        v = self.split_heads(self.value(hidden_states))
        scores = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(self.head_dim)
        scores = scores + extended_mask
        probs = self.dropout(nn.functional.softmax(scores, dim=-1))
        context = torch.matmul(probs, v).permute(0, 2, 1, 3).contiguous()
        context = context.view(context.size()[:-2] + (self.num_heads * self.head_dim,))
        return self.LayerNorm(self.out_dropout(self.dense(context)) + hidden_states)


class BertLayer(nn.Module):
    def __init__(self, config: BertConfig):
        super().__init__()
        self.attention = BertSelfAttention(config)
        self.intermediate = nn.Linear(config.hidden_size, config.intermediate_size)
        self.output = nn.Linear(config.intermediate_size, config.hidden_size)
        self.dropout = nn.Dropout(config.hidden_dropout_prob)
        self.LayerNorm = nn.LayerNorm(config.hidden_size, eps=config.layer_norm_eps)

    def forward(self, hidden_states, extended_mask):
        attn = self.attention(hidden_states, extended_mask)
        inter = F.gelu(self.intermediate(attn))
        return self.LayerNorm(self.dropout(self.output(inter)) + attn)


class BertEncoder(nn.Module):
    def __init__(self, config: BertConfig):
        super().__init__()
        self.config = config
        self.embeddings = BertEmbeddings(config)
        self.layer = nn.ModuleList([BertLayer(config) for _ in range(config.num_hidden_layers)])
        if config.head == "pooler":
            self.pooler = nn.Linear(config.hidden_size, config.hidden_size)
            self.classifier = nn.Linear(config.hidden_size, config.num_labels)
        else:
            self.transform = nn.Linear(config.hidden_size, config.hidden_size)
            self.transform_ln = nn.LayerNorm(config.hidden_size, eps=config.layer_norm_eps)
            self.decoder = nn.Linear(config.hidden_size, config.vocab_size)
            self.decoder.weight = self.embeddings.word_embeddings.weight
        self.apply(self._init_weights)

    def _init_weights(self, module):
        if isinstance(module, nn.Linear | nn.Embedding):
            nn.init.normal_(module.weight, mean=0.0, std=0.02)
        if isinstance(module, nn.Linear) and module.bias is not None:
            nn.init.zeros_(module.bias)

    def forward(self, input_ids, attention_mask=None, token_type_ids=None, labels=None):
        if attention_mask is None:
            attention_mask = torch.ones_like(input_ids)
        if token_type_ids is None:
            token_type_ids = torch.zeros_like(input_ids)
        hidden = self.embeddings(input_ids, token_type_ids)
        # (B, T) of 1/0 -> (B, 1, 1, T) additive mask: 0 where attended, a large negative where not
        extended = attention_mask[:, None, None, :].to(hidden.dtype)
        extended = (1.0 - extended) * torch.finfo(hidden.dtype).min
        for layer in self.layer:
            hidden = layer(hidden, extended)
        if self.config.head == "pooler":
            pooled = torch.tanh(self.pooler(hidden[:, 0]))
            logits = self.classifier(pooled)
            loss = None if labels is None else F.cross_entropy(logits, labels)
            return logits, loss
        logits = self.decoder(self.transform_ln(F.gelu(self.transform(hidden))))
        loss = None
        if labels is not None:
            loss = F.cross_entropy(logits.view(-1, self.config.vocab_size), labels.view(-1),
                                   ignore_index=-100)
        return logits, loss


# ----------------------------------------------------------------------------------------------
# Llama-style blocks: RMSNorm, rotary embeddings, SwiGLU, grouped-query attention


@dataclass
class LlamaConfig:
    vocab_size: int = 100
    dim: int = 64
    n_layers: int = 2
    n_heads: int = 4
    n_kv_heads: int = 2
    hidden_dim: int = 172
    norm_eps: float = 1e-5
    rope_theta: float = 10000.0
    kv_repeat: str = "repeat_interleave"  # or "expand": expand + reshape of the kv heads

    @classmethod
    def tiny(cls, **overrides) -> LlamaConfig:
        return cls(**{"dim": 32, "hidden_dim": 88, **overrides})


class RMSNorm(nn.Module):
    def __init__(self, dim: int, eps: float = 1e-6):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(dim))

    def forward(self, x):
        xf = x.float()
        normed = xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + self.eps)
        return normed.type_as(x) * self.weight


def rotary_cos_sin(seqlen: int, head_dim: int, theta: float, device):
    inv_freq = 1.0 / (theta ** (torch.arange(0, head_dim, 2, device=device).float() / head_dim))
    t = torch.arange(seqlen, device=device).float()
    freqs = torch.outer(t, inv_freq)
    emb = torch.cat((freqs, freqs), dim=-1)
    return emb.cos(), emb.sin()


def rotate_half(x):
    x1 = x[..., : x.shape[-1] // 2]
    x2 = x[..., x.shape[-1] // 2 :]
    return torch.cat((-x2, x1), dim=-1)


def apply_rotary(x, cos, sin):
    # x: (B, H, T, D); cos/sin: (T, D)
    return x * cos[None, None] + rotate_half(x) * sin[None, None]


class LlamaAttention(nn.Module):
    def __init__(self, config: LlamaConfig):
        super().__init__()
        self.n_heads = config.n_heads
        self.n_kv_heads = config.n_kv_heads
        self.head_dim = config.dim // config.n_heads
        self.kv_repeat = config.kv_repeat
        self.wq = nn.Linear(config.dim, config.n_heads * self.head_dim, bias=False)
        self.wk = nn.Linear(config.dim, config.n_kv_heads * self.head_dim, bias=False)
        self.wv = nn.Linear(config.dim, config.n_kv_heads * self.head_dim, bias=False)
        self.wo = nn.Linear(config.n_heads * self.head_dim, config.dim, bias=False)

    def repeat_kv(self, x):
        n_rep = self.n_heads // self.n_kv_heads
        if n_rep == 1:
            return x
        if self.kv_repeat == "repeat_interleave":
            return torch.repeat_interleave(x, n_rep, dim=1)
        b, h, t, d = x.shape
        return x[:, :, None, :, :].expand(b, h, n_rep, t, d).reshape(b, h * n_rep, t, d)

    def forward(self, x, cos, sin):
        bsz, seqlen, _ = x.shape
        q = self.wq(x).view(bsz, seqlen, self.n_heads, self.head_dim).transpose(1, 2)
        k = self.wk(x).view(bsz, seqlen, self.n_kv_heads, self.head_dim).transpose(1, 2)
        v = self.wv(x).view(bsz, seqlen, self.n_kv_heads, self.head_dim).transpose(1, 2)
        q, k = apply_rotary(q, cos, sin), apply_rotary(k, cos, sin)
        k, v = self.repeat_kv(k), self.repeat_kv(v)
        out = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        return self.wo(out.transpose(1, 2).reshape(bsz, seqlen, -1))


class SwiGLU(nn.Module):
    def __init__(self, dim: int, hidden_dim: int):
        super().__init__()
        self.w1 = nn.Linear(dim, hidden_dim, bias=False)
        self.w2 = nn.Linear(hidden_dim, dim, bias=False)
        self.w3 = nn.Linear(dim, hidden_dim, bias=False)

    def forward(self, x):
        return self.w2(F.silu(self.w1(x)) * self.w3(x))


class LlamaBlock(nn.Module):
    def __init__(self, config: LlamaConfig):
        super().__init__()
        self.attention_norm = RMSNorm(config.dim, config.norm_eps)
        self.attention = LlamaAttention(config)
        self.ffn_norm = RMSNorm(config.dim, config.norm_eps)
        self.feed_forward = SwiGLU(config.dim, config.hidden_dim)

    def forward(self, x, cos, sin):
        h = x + self.attention(self.attention_norm(x), cos, sin)
        return h + self.feed_forward(self.ffn_norm(h))


class LlamaBlockModel(nn.Module):
    def __init__(self, config: LlamaConfig):
        super().__init__()
        self.config = config
        self.tok_embeddings = nn.Embedding(config.vocab_size, config.dim)
        self.layers = nn.ModuleList([LlamaBlock(config) for _ in range(config.n_layers)])
        self.norm = RMSNorm(config.dim, config.norm_eps)
        self.output = nn.Linear(config.dim, config.vocab_size, bias=False)

    def forward(self, idx, targets=None):
        _, seqlen = idx.shape
        h = self.tok_embeddings(idx)
        cos, sin = rotary_cos_sin(seqlen, self.config.dim // self.config.n_heads,
                                  self.config.rope_theta, idx.device)
        for layer in self.layers:
            h = layer(h, cos, sin)
        logits = self.output(self.norm(h)).float()
        loss = None
        if targets is not None:
            loss = F.cross_entropy(logits.reshape(-1, logits.size(-1)), targets.reshape(-1))
        return logits, loss


# ----------------------------------------------------------------------------------------------
# T5-style encoder-decoder: RMS layer norm, relative position bias, cross-attention


@dataclass
class T5Config:
    vocab_size: int = 100
    d_model: int = 64
    d_kv: int = 16
    d_ff: int = 128
    num_layers: int = 2
    num_heads: int = 4
    relative_attention_num_buckets: int = 32
    relative_attention_max_distance: int = 128
    dropout_rate: float = 0.0
    layer_norm_epsilon: float = 1e-6
    relative_bias: bool = True  # False: no position bias at all ("plain")

    @classmethod
    def tiny(cls, **overrides) -> T5Config:
        return cls(**{"d_model": 32, "d_kv": 8, "d_ff": 64, **overrides})


class T5LayerNorm(nn.Module):
    """RMS norm without mean subtraction or bias, as T5 uses."""

    def __init__(self, hidden_size: int, eps: float = 1e-6):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(hidden_size))
        self.variance_epsilon = eps

    def forward(self, hidden_states):
        variance = hidden_states.to(torch.float32).pow(2).mean(-1, keepdim=True)
        hidden_states = hidden_states * torch.rsqrt(variance + self.variance_epsilon)
        return self.weight * hidden_states


def relative_position_bucket(relative_position, bidirectional: bool, num_buckets: int,
                             max_distance: int):
    """Map signed distances to buckets: exact for small distances, log-spaced for large ones."""
    buckets = torch.zeros_like(relative_position)
    if bidirectional:
        num_buckets //= 2
        buckets = buckets + (relative_position > 0).to(torch.long) * num_buckets
        relative_position = torch.abs(relative_position)
    else:
        relative_position = -torch.min(relative_position, torch.zeros_like(relative_position))
    max_exact = num_buckets // 2
    is_small = relative_position < max_exact
    large = max_exact + (
        torch.log(relative_position.float() / max_exact) / math.log(max_distance / max_exact)
        * (num_buckets - max_exact)).to(torch.long)
    large = torch.min(large, torch.full_like(large, num_buckets - 1))
    return buckets + torch.where(is_small, relative_position, large)


class T5Attention(nn.Module):
    def __init__(self, config: T5Config, has_relative_bias: bool, bidirectional: bool):
        super().__init__()
        self.n_heads = config.num_heads
        self.d_kv = config.d_kv
        inner = config.num_heads * config.d_kv
        self.q = nn.Linear(config.d_model, inner, bias=False)
        self.k = nn.Linear(config.d_model, inner, bias=False)
        self.v = nn.Linear(config.d_model, inner, bias=False)
        self.o = nn.Linear(inner, config.d_model, bias=False)
        self.bidirectional = bidirectional
        self.num_buckets = config.relative_attention_num_buckets
        self.max_distance = config.relative_attention_max_distance
        self.relative_attention_bias = (
            nn.Embedding(self.num_buckets, self.n_heads) if has_relative_bias else None)

    def compute_bias(self, query_length, key_length, device):
        context = torch.arange(query_length, dtype=torch.long, device=device)[:, None]
        memory = torch.arange(key_length, dtype=torch.long, device=device)[None, :]
        buckets = relative_position_bucket(memory - context, self.bidirectional,
                                           self.num_buckets, self.max_distance)
        values = self.relative_attention_bias(buckets)  # (q, k, heads)
        return values.permute(2, 0, 1).unsqueeze(0)

    def shape(self, x):
        return x.view(x.size(0), -1, self.n_heads, self.d_kv).transpose(1, 2)

    def forward(self, hidden, key_value_states=None, position_bias=None, mask=None):
        kv = hidden if key_value_states is None else key_value_states
        q, k, v = self.shape(self.q(hidden)), self.shape(self.k(kv)), self.shape(self.v(kv))
        scores = torch.matmul(q, k.transpose(3, 2))  # T5 does not scale by 1/sqrt(d)
        if position_bias is None:
            if self.relative_attention_bias is not None:
                position_bias = self.compute_bias(q.size(2), k.size(2), hidden.device)
            else:
                position_bias = torch.zeros(1, self.n_heads, q.size(2), k.size(2),
                                            device=hidden.device, dtype=scores.dtype)
            if mask is not None:
                position_bias = position_bias + mask
        scores = scores + position_bias
        weights = F.softmax(scores.float(), dim=-1).type_as(scores)
        out = torch.matmul(weights, v).transpose(1, 2).contiguous()
        return self.o(out.view(out.size(0), -1, self.n_heads * self.d_kv)), position_bias


class T5FF(nn.Module):
    def __init__(self, config: T5Config):
        super().__init__()
        self.wi = nn.Linear(config.d_model, config.d_ff, bias=False)
        self.wo = nn.Linear(config.d_ff, config.d_model, bias=False)
        self.dropout = nn.Dropout(config.dropout_rate)

    def forward(self, x):
        return self.wo(self.dropout(F.relu(self.wi(x))))


class T5Block(nn.Module):
    def __init__(self, config: T5Config, is_decoder: bool, has_relative_bias: bool):
        super().__init__()
        self.is_decoder = is_decoder
        self.ln_self = T5LayerNorm(config.d_model, config.layer_norm_epsilon)
        self.self_attn = T5Attention(config, has_relative_bias, bidirectional=not is_decoder)
        if is_decoder:
            self.ln_cross = T5LayerNorm(config.d_model, config.layer_norm_epsilon)
            self.cross_attn = T5Attention(config, False, bidirectional=True)
        self.ln_ff = T5LayerNorm(config.d_model, config.layer_norm_epsilon)
        self.ff = T5FF(config)
        self.dropout = nn.Dropout(config.dropout_rate)

    def forward(self, x, position_bias, mask, encoder_states=None, cross_bias=None,
                cross_mask=None):
        attn, position_bias = self.self_attn(self.ln_self(x), position_bias=position_bias,
                                             mask=mask)
        x = x + self.dropout(attn)
        if self.is_decoder:
            attn, cross_bias = self.cross_attn(self.ln_cross(x), key_value_states=encoder_states,
                                               position_bias=cross_bias, mask=cross_mask)
            x = x + self.dropout(attn)
        x = x + self.dropout(self.ff(self.ln_ff(x)))
        return x, position_bias, cross_bias


class T5Stack(nn.Module):
    def __init__(self, config: T5Config, is_decoder: bool, embed_tokens: nn.Embedding):
        super().__init__()
        self.embed_tokens = embed_tokens
        self.is_decoder = is_decoder
        self.block = nn.ModuleList([
            T5Block(config, is_decoder, has_relative_bias=(i == 0 and config.relative_bias))
            for i in range(config.num_layers)])
        self.final_layer_norm = T5LayerNorm(config.d_model, config.layer_norm_epsilon)
        self.dropout = nn.Dropout(config.dropout_rate)

    def forward(self, input_ids, attention_mask, encoder_states=None, encoder_mask=None):
        x = self.dropout(self.embed_tokens(input_ids))
        seqlen = input_ids.size(1)
        neg = torch.finfo(x.dtype).min
        mask = (1.0 - attention_mask[:, None, None, :].to(x.dtype)) * neg
        if self.is_decoder:
            causal = torch.tril(torch.ones(seqlen, seqlen, device=x.device, dtype=x.dtype))
            mask = mask + (1.0 - causal[None, None]) * neg
        cross_mask = None
        if encoder_mask is not None:
            cross_mask = (1.0 - encoder_mask[:, None, None, :].to(x.dtype)) * neg
        position_bias = cross_bias = None
        for block in self.block:
            x, position_bias, cross_bias = block(x, position_bias, mask, encoder_states,
                                                 cross_bias, cross_mask)
            mask = None  # folded into position_bias by the first block
            cross_mask = None
        return self.dropout(self.final_layer_norm(x))


class T5Small(nn.Module):
    def __init__(self, config: T5Config):
        super().__init__()
        self.config = config
        self.shared = nn.Embedding(config.vocab_size, config.d_model)
        self.encoder = T5Stack(config, is_decoder=False, embed_tokens=self.shared)
        self.decoder = T5Stack(config, is_decoder=True, embed_tokens=self.shared)
        self.lm_head = nn.Linear(config.d_model, config.vocab_size, bias=False)

    def forward(self, input_ids, decoder_input_ids, attention_mask=None,
                decoder_attention_mask=None, labels=None):
        if attention_mask is None:
            attention_mask = torch.ones_like(input_ids)
        if decoder_attention_mask is None:
            decoder_attention_mask = torch.ones_like(decoder_input_ids)
        enc = self.encoder(input_ids, attention_mask)
        dec = self.decoder(decoder_input_ids, decoder_attention_mask, enc, attention_mask)
        logits = self.lm_head(dec * (self.config.d_model ** -0.5))
        loss = None
        if labels is not None:
            loss = F.cross_entropy(logits.view(-1, logits.size(-1)), labels.view(-1),
                                   ignore_index=-100)
        return logits, loss


# ----------------------------------------------------------------------------------------------
# Registry and batches

# ----------------------------------------------------------------------------------------------
# GPT-2's attention block with q, k, v cut out of its projection in one of three layouts


class QKVAttention(nn.Module):
    """"gpt2": q | k | v along the channels; "interleaved": q | k | v inside each head; "timm":
    viewed (b, t, 3, h, e), permuted, then indexed (slices of a transposed value)."""

    def __init__(self, d=32, heads=4, layout="gpt2"):
        super().__init__()
        self.d, self.heads, self.layout = d, heads, layout
        self.qkv = nn.Linear(d, 3 * d)
        self.proj = nn.Linear(d, d)

    def forward(self, x):
        b, t, _ = x.shape
        h, e = self.heads, self.d // self.heads
        qkv = self.qkv(x)
        if self.layout == "timm":
            q, k, v = qkv.view(b, t, 3, h, e).permute(2, 0, 3, 1, 4)
        elif self.layout == "interleaved":
            q, k, v = (y.transpose(1, 2) for y in qkv.view(b, t, h, 3 * e).split(e, dim=-1))
        else:
            q, k, v = (y.view(b, t, h, e).transpose(1, 2) for y in qkv.split(self.d, dim=2))
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        return self.proj(y.transpose(1, 2).reshape(b, t, self.d))


MODELS = {
    "gpt": (GPT, GPTConfig),
    "bert": (BertEncoder, BertConfig),
    "llama": (LlamaBlockModel, LlamaConfig),
    "t5": (T5Small, T5Config),
}


def build(name: str, seed: int = 0, **overrides) -> nn.Module:
    """A tiny instance of model `name` ("gpt", "bert", "llama", "t5"), seeded."""
    model_cls, config_cls = MODELS[name]
    torch.manual_seed(seed)
    return model_cls(config_cls.tiny(**overrides))


def make_batch(name: str, batch: int, seqlen: int, seed: int = 0, vocab_size: int = 100,
               device="cpu") -> dict[str, torch.Tensor]:
    """Keyword arguments for model `name`'s forward: random tokens of length `seqlen`, with
    targets/labels; BERT and T5 batches have right-padding (every row keeps >= 1 real token)."""
    g = torch.Generator().manual_seed(seed)
    tokens = torch.randint(0, vocab_size, (batch, seqlen + 1), generator=g)
    if name in ("gpt", "llama"):
        out = {"idx": tokens[:, :-1], "targets": tokens[:, 1:]}
    else:
        lengths = torch.randint(1, seqlen + 1, (batch,), generator=g)
        lengths[0] = seqlen  # at least one unpadded row
        mask = (torch.arange(seqlen)[None, :] < lengths[:, None]).long()
        ids = tokens[:, :seqlen] * mask
        if name == "bert":
            labels = torch.where(mask.bool(), tokens[:, 1:], torch.full_like(ids, -100))
            out = {"input_ids": ids, "attention_mask": mask,
                   "token_type_ids": torch.zeros_like(ids), "labels": labels}
        else:
            dec_len = max(1, seqlen // 2 + 1)
            dec = torch.randint(1, vocab_size, (batch, dec_len + 1), generator=g)
            out = {"input_ids": ids, "attention_mask": mask,
                   "decoder_input_ids": dec[:, :-1], "labels": dec[:, 1:]}
    return {k: v.contiguous().to(device) for k, v in out.items()}
