"""A module that overrides `__call__` and calls `super().__call__` (Hugging Face's
GradientCheckpointingLayer does, for every BERT/LLaMA layer in transformers 5.17) is inlined
as its forward: one graph, no break on the hook checks inside `nn.Module._call_impl`."""

import pytest
import torch

import symc


class CheckpointingLayer(torch.nn.Module):
    gradient_checkpointing = False

    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(4, 4)

    def __call__(self, *args, **kwargs):
        if self.gradient_checkpointing and self.training:
            raise AssertionError("not taken in this test")
        return super().__call__(*args, **kwargs)

    def forward(self, x, scale=1.0):
        return self.lin(x).relu() * scale


class Stack(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.a, self.b = CheckpointingLayer(), CheckpointingLayer()

    def forward(self, x):
        return self.b(self.a(x), scale=2.0)


@pytest.mark.parametrize("backend", ["eager", "aot_eager", "inductor"])
def test_super_call_of_module_is_inlined_without_a_break(backend):
    model = Stack()
    compiled = symc.compile(model, backend=backend)
    for n in (3, 1, 5, 7, 11):
        x = torch.randn(n, 4, requires_grad=True)
        expected = model(x)
        (gx_expected,) = torch.autograd.grad(expected.sum(), x)
        got = compiled(x)
        (gx,) = torch.autograd.grad(got.sum(), x)
        torch.testing.assert_close(got, expected)
        torch.testing.assert_close(gx, gx_expected)
    report = symc.explain(compiled)
    assert report.graph_breaks == 0, [str(b) for b in report.breaks]
    assert report.compiles <= 2  # size 1 may be specialised at most once


def test_super_call_still_breaks_when_the_module_has_a_hook():
    model = Stack()
    seen = []
    model.a.register_forward_hook(lambda m, i, o: seen.append(o.shape))
    compiled = symc.compile(model)
    x = torch.randn(3, 4)
    torch.testing.assert_close(compiled(x), model(x))
    assert len(seen) == 2  # the hook ran once per call, compiled or not
