"""The Capture contract: placeholders, sources, metas, guards, outputs and copy-back."""

from __future__ import annotations

import pytest
import sympy
import torch
import torch.nn as nn

import capture
from guards import IdentityGuard, TensorMatchGuard
from symbolic import verify


class Lin(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(4, 2)
        self.register_buffer("count", torch.zeros(()))

    def forward(self, x, scale: float = 2.0):
        self.count.add_(1)
        return self.proj(x) * scale, x.shape[0]


def test_user_inputs_come_first_then_parameters_and_buffers():
    m = Lin()
    cap = capture.translate(Lin.forward, (m, torch.randn(5, 4)))
    verify(cap.graph)
    names = [str(s) for s in cap.inputs]
    assert names[0] == "L['x']"
    # a float argument is a 0-d graph input (issue 22), made where it first meets a tensor
    floats = [n for n in names if "L['scale']" in n]
    assert len(floats) == 1
    assert set(names[1:]) - set(floats) == {"L['self'].count", "L['self'].proj.weight",
                                            "L['self'].proj.bias"}
    placeholders = [n for n in cap.graph.nodes if n.op == "placeholder"]
    assert len(placeholders) == len(cap.inputs)
    x_meta = placeholders[0].meta["val"]
    assert all(isinstance(s, sympy.Symbol) for s in x_meta.shape)
    weight = placeholders[names.index("L['self'].proj.weight")].meta["val"]
    assert weight.shape == (2, 4)  # parameters are static


def test_guards_cover_module_identity_values_and_tensors():
    m = Lin()
    cap = capture.translate(Lin.forward, (m, torch.randn(5, 4)), {"scale": 3.0})
    kinds = {type(g) for g in cap.guards.guards}
    assert {IdentityGuard, TensorMatchGuard} <= kinds
    # a float argument is a graph input: its type is guarded, not its value
    assert not any(str(g) == "L['scale'] == 3.0" for g in cap.guards.guards)
    assert any("L['scale']" in str(g) and "float" in str(g) for g in cap.guards.guards)
    where = {g.where for g in cap.guards.guards if isinstance(g, TensorMatchGuard)
             and "proj.weight" in str(g.source)}
    assert where and all(w.startswith("linear.py") is False for w in where)


def test_buffer_write_is_returned_for_copy_back_and_sizes_rebuild():
    m = Lin()
    cap = capture.translate(Lin.forward, (m, torch.randn(5, 4)))
    assert len(cap.mutated) == 1
    (input_index, output_index) = cap.mutated[0]
    assert str(cap.inputs[input_index]) == "L['self'].count"
    output_node = next(n for n in cap.graph.nodes if n.op == "output")
    assert len(output_node.args[0]) == output_index + 1
    s0 = cap.env.symbols and next(iter(cap.env.symbols))
    spec = cap.output
    assert spec.kind == "tuple" and spec.children[1].kind == "sym"
    rebuilt = spec.rebuild((torch.ones(1), torch.ones(())), {s0: 9})
    assert rebuilt[1] == 9


def test_unsupported_names_reason_file_line_and_source():
    def fn(x):
        return x.tolist()

    with pytest.raises(capture.Unsupported) as info:
        capture.translate(fn, (torch.randn(2),))
    err = info.value
    assert "tolist" in err.reason
    assert err.where.startswith("test_translate.py:") and err.line == "return x.tolist()"


def test_size_one_and_zero_inputs_are_specialised():
    def fn(x):
        return x + 1

    cap = capture.translate(fn, (torch.randn(1, 0, 3),))
    shape = next(n for n in cap.graph.nodes if n.op == "placeholder").meta["val"].shape
    assert shape[0] == 1 and shape[1] == 0 and isinstance(shape[2], sympy.Symbol)
    (guard,) = [g for g in cap.guards.guards if isinstance(g, TensorMatchGuard)]
    assert guard.static_sizes == ((0, 1), (1, 0))


def test_size_comparison_records_guard_with_user_location():
    def fn(x):
        if x.shape[0] > 8:
            return x * 2
        return x

    cap = capture.translate(fn, (torch.randn(4, 2),))
    (guard,) = cap.env.guards
    assert str(guard) == "s0 <= 8" and guard.where.startswith("test_translate.py:")
