"""bench/train_varlen.py --interleave: every kept mode gets one steady pass per round, in an
order that rotates, and its tok/s is that of its median pass."""

import types

import torch

from bench import train_varlen


class _Counting(torch.nn.Module):
    def __init__(self, name, calls):
        super().__init__()
        self.w = torch.nn.Parameter(torch.ones(()))
        self.name, self.calls = name, calls

    def forward(self, idx):
        self.calls.append(self.name)
        return None, (self.w * idx.float()).sum()


def test_interleaved_passes_alternate_and_rotate():
    calls = []
    live = {}
    for name in ("a", "b", "c"):
        model = _Counting(name, calls)
        live[name] = (model, torch.optim.SGD(model.parameters(), lr=0.0))
    batches = [{"idx": torch.ones(2, 3)}, {"idx": torch.ones(2, 5)}]
    args = types.SimpleNamespace(device="cpu")
    out = train_varlen.interleaved_steady(live, args, batches, tokens_per_pass=16, rounds=3)
    per_pass = [calls[i] for i in range(0, len(calls), len(batches))]
    assert per_pass == ["a", "b", "c", "b", "c", "a", "c", "a", "b"]
    for name in live:
        assert len(out[name]["pass_s"]) == 3
        ts = sorted(out[name]["pass_s"])
        assert out[name]["median_tokens_per_s"] == 16 / ts[1]
