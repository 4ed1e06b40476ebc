"""build_joint: tangents keep the outputs' symbolic shapes, inputs are validated, missing rules
and integer inputs raise AutogradError, and nothing is specialised."""

from __future__ import annotations

import pytest
import torch

from autograd_aot import AutogradError, build_joint
from prims import ops
from symbolic import TensorMeta
from tests.autograd_aot.builders import build_case


def _two_outputs(d, n, make):
    x = make((d, 3))
    return ops.sum(ops.exp(x), (1,)), ops.argmax(x, 1)


def test_tangents_have_the_outputs_symbolic_shapes():
    graph, env, _, flags, _ = build_case(_two_outputs, 5)
    joint = build_joint(graph, env, flags)
    assert joint.output_differentiable == [True, False]
    (tangent,) = joint.tangents
    meta = tangent.meta["val"]
    assert isinstance(meta, TensorMeta) and meta.dtype == torch.float64
    assert len(meta.shape) == 1 and meta.shape[0].free_symbols
    assert not env.guards


def test_joint_returns_outputs_then_input_grads():
    graph, env, _, flags, _ = build_case(_two_outputs, 5)
    joint = build_joint(graph, env, flags)
    out = [n for n in joint.graph.nodes if n.op == "output"][0].args[0]
    assert len(out) == 3 and out[2] is joint.grads[0]


def test_input_without_cotangent_gets_zeros():
    def unused(d, n, make):
        x, y = make((d, 3)), make((d, 3))
        return ops.exp(x)

    graph, env, _, _, _ = build_case(unused, 3)
    joint = build_joint(graph, env, [True, True])
    assert joint.grads[1].target.name == "full"


def test_integer_input_cannot_require_grad():
    def index_sum(d, n, make):
        return ops.index_select(make((d, 3)), 0, make((4,), "index", high=n))

    graph, env, _, _, _ = build_case(index_sum, 3)
    with pytest.raises(AutogradError, match="cannot require grad"):
        build_joint(graph, env, [True, True])


def test_wrong_number_of_flags_is_reported():
    graph, env, _, _, _ = build_case(_two_outputs, 3)
    with pytest.raises(AutogradError, match="expected 1 requires_grad flags"):
        build_joint(graph, env, [True, True])


def test_prim_without_rule_raises_naming_the_table():
    def attention_grad(d, n, make):
        q, k, v, g = (make((1, 1, d, 4)) for _ in range(4))
        return ops.sdpa_backward(g, q, k, v, None, 0.0, False, None, None, 0)[0]

    graph, env, _, flags, _ = build_case(attention_grad, 3)
    with pytest.raises(AutogradError, match="no VJP rule for prim 'sdpa_backward'"):
        build_joint(graph, env, flags)
