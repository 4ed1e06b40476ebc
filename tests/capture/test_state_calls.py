"""Calls run at capture time on an object's state (capture/state_calls.py): transformers'
`config.get_text_config(decoder=True)`, which deep-copies an encoder-decoder config (T5's
`DynamicCache(config=...)`), is one constant guarded on the config's `__dict__`."""

from __future__ import annotations

import pytest
import torch

import symc
from tests.device import DEVICE

transformers = pytest.importorskip("transformers")


class DecoderDepth(torch.nn.Module):
    def __init__(self, config):
        super().__init__()
        self.config = config

    def forward(self, x):
        decoder = self.config.get_text_config(decoder=True)   # copy.deepcopy: id(), __reduce_ex__
        return x * decoder.num_hidden_layers + decoder.num_attention_heads


def test_text_config_of_an_encoder_decoder_is_one_guarded_constant():
    config = transformers.T5Config(d_model=32, num_layers=2, num_decoder_layers=3, num_heads=4)
    model = DecoderDepth(config)
    compiled = symc.compile(model, backend="aot_eager")
    for n in (3, 5, 1):
        x = torch.randn(n, device=DEVICE)
        torch.testing.assert_close(compiled(x), model(x))
    report = symc.explain(compiled)
    assert (report.compiles, report.graph_breaks) == (1, 0), (report, report.breaks)
    assert "state_calls.frozen(L['self'].config.__dict__)" in str(report), str(report)
    config.num_layers = 5   # T5's num_hidden_layers: the copy reads it, the entry must not hold
    x = torch.randn(4, device=DEVICE)
    torch.testing.assert_close(compiled(x), x * 5 + 4)
    torch.testing.assert_close(compiled(x), model(x))
    assert symc.explain(compiled).compiles == 2


def test_text_config_returning_the_config_itself_is_interpreted():
    config = transformers.LlamaConfig(hidden_size=32, num_hidden_layers=2,
                                      num_attention_heads=4, num_key_value_heads=2)
    compiled = symc.compile(DecoderDepth(config), backend="aot_eager")
    x = torch.randn(3, device=DEVICE)
    torch.testing.assert_close(compiled(x), x * 2 + 4)
    assert "frozen(" not in str(symc.explain(compiled))   # its reads guarded one by one
