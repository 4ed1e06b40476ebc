"""BatchNorm in training mode updates its running statistics and `num_batches_tracked` in place
(issue 26, class 11): the compiled model must leave the same buffers and weights as eager."""

from __future__ import annotations

import copy

import pytest
import torch
import torch.nn as nn

import symc


@pytest.mark.parametrize("backend", ["eager", "aot_eager", "inductor"])
def test_batchnorm_training_updates_buffers_like_eager(backend):
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 6), nn.BatchNorm1d(6), nn.ReLU(), nn.Linear(6, 1))
    twin = copy.deepcopy(model)
    compiled = symc.compile(twin, backend=backend)
    for net, call in ((model, model), (twin, compiled)):
        opt = torch.optim.SGD(net.parameters(), lr=0.1)
        for step, n in enumerate((5, 3)):
            x = torch.randn(n, 4, generator=torch.Generator().manual_seed(step))
            net.train()
            opt.zero_grad()
            call(x).pow(2).mean().backward()
            opt.step()
            net.eval()
            with torch.no_grad():
                call(x)
    for (name, a), (_, b) in zip(model.state_dict().items(), twin.state_dict().items()):
        torch.testing.assert_close(b, a, msg=lambda m, n=name: f"{n}: {m}")
    assert int(twin[1].num_batches_tracked) == 2
