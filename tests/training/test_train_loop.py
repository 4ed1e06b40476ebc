"""tests/training: a tiny transformer trained for several steps through the patterns of real
training loops, compiled vs eager, on every backend: losses at every step and every parameter
(and whether its grad is None) after the last one must agree. Sizes vary per step."""

from __future__ import annotations

import pytest
import torch

import symc
from training_model import (
    TinyTransformer,
    assert_same_training,
    batch,
    loss_fn,
    sgd,
    twin,
)

BACKENDS = ["eager", "aot_eager", "inductor"]
STEPS = 4


@pytest.fixture(autouse=True)
def _seed():
    torch.manual_seed(0)


def _train(model, call, steps=STEPS, *, before_step=None, micro=1):
    """`steps` SGD steps of `call` (the model or its compiled form); returns the losses."""
    opt = sgd(model)
    losses = []
    for step in range(steps):
        if before_step is not None:
            before_step(step, model)
        opt.zero_grad(set_to_none=True)
        total = torch.zeros(())
        for m in range(micro):                      # gradient accumulation
            x, y = batch(step, offset=3 * m)
            loss = loss_fn(call(x), y) / micro
            loss.backward()
            total += loss.detach()
        opt.step()
        losses.append(total)
    return losses


@pytest.mark.parametrize("backend", BACKENDS)
def test_validation_under_no_grad_first_then_train_eval_switches(backend):
    eager, compiled, inner = twin(TinyTransformer(), backend)

    def run(model, call):
        with torch.no_grad():                       # the first call: no grad, train mode
            x, y = batch(0, offset=4)
            losses = [loss_fn(call(x), y)]
        for phase in range(2):
            model.eval()
            with torch.no_grad():                   # validation pass (the first call)
                x, y = batch(phase, offset=5)
                losses.append(loss_fn(call(x), y))
            model.train()
            losses += _train(model, call, steps=2)
        return losses

    assert_same_training(run(eager, eager), run(inner, compiled), eager, inner)
    report = symc.explain(compiled)
    assert report.graph_breaks == 0, str(report)


@pytest.mark.parametrize("backend", BACKENDS)
def test_freezing_and_unfreezing_layers(backend):
    eager, compiled, inner = twin(TinyTransformer(), backend)

    def freeze(step, model):
        for p in model.blocks[0].parameters():    # frozen for two steps, then trained
            p.requires_grad_(step >= 2)

    assert_same_training(_train(eager, eager, before_step=freeze),
                         _train(inner, compiled, before_step=freeze), eager, inner)


@pytest.mark.parametrize("backend", BACKENDS)
def test_hook_added_and_removed_mid_training(backend):
    eager, compiled, inner = twin(TinyTransformer(), backend)
    handles = {}

    def hooks(step, model):
        if step == 1:
            handles[id(model)] = model.blocks[0].mlp.register_forward_hook(
                lambda mod, inp, out: out * 0.5)
        if step == 3:
            handles.pop(id(model)).remove()

    assert_same_training(_train(eager, eager, before_step=hooks),
                         _train(inner, compiled, before_step=hooks), eager, inner)


@pytest.mark.parametrize("backend", BACKENDS)
def test_gradient_accumulation(backend):
    eager, compiled, inner = twin(TinyTransformer(), backend)
    assert_same_training(_train(eager, eager, steps=2, micro=3),
                         _train(inner, compiled, steps=2, micro=3), eager, inner)


@pytest.mark.parametrize("backend", BACKENDS)
def test_activation_checkpointing(backend):
    eager, compiled, inner = twin(TinyTransformer(checkpointed=True), backend)
    assert_same_training(_train(eager, eager, steps=3), _train(inner, compiled, steps=3),
                         eager, inner)


@pytest.mark.parametrize("backend", BACKENDS)
def test_gradient_penalty(backend):
    eager, compiled, inner = twin(TinyTransformer(), backend)

    def run(model, call):
        opt = sgd(model)
        losses = []
        for step in range(2):
            x, y = batch(step)
            x.requires_grad_(True)
            opt.zero_grad(set_to_none=True)
            loss = loss_fn(call(x), y)
            (gx,) = torch.autograd.grad(loss, x, create_graph=True)
            penalty = (gx.flatten(1).norm(dim=1) - 1).pow(2).mean()
            (loss + 0.1 * penalty).backward()
            opt.step()
            losses.append((loss + 0.1 * penalty).detach())
        return losses

    assert_same_training(run(eager, eager), run(inner, compiled), eager, inner)


@pytest.mark.parametrize("backend", BACKENDS)
def test_optimizer_step_inside_the_compiled_function(backend):
    eager, _, inner = twin(TinyTransformer(), backend)

    def make_step(model):
        opt = sgd(model)

        def train_step(x, y):
            opt.zero_grad(set_to_none=True)
            loss = loss_fn(model(x), y)
            loss.backward()
            opt.step()
            return loss.detach()

        return train_step

    eager_step, compiled_step = make_step(eager), symc.compile(make_step(inner), backend=backend)
    losses_e = [eager_step(*batch(s)) for s in range(STEPS)]
    losses_c = [compiled_step(*batch(s)) for s in range(STEPS)]
    assert_same_training(losses_e, losses_c, eager, inner)
