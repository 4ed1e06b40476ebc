"""The loop IR: printing, the torch oracle on hand-built groups, views as index arithmetic, and
the scheduler's fusion decisions (symbolic iteration spaces compared by the ShapeEnv)."""

from __future__ import annotations

import textwrap

import sympy
import torch

from inductor.codegen.common import GroupNode, KernelGroup
from inductor.graph import GraphLowering
from inductor.ir import Buffer, Layout, Value, buffer_value, pointwise_node, reduction_node
from inductor.ir_eval import run_group_torch
from inductor.ops import ops
from inductor.scheduler import finalize, schedule
from prims import ops as P
from symbolic import Analyzer, LocalSource, ShapeEnv
from tests.inductor.inductor_graphs import decomposed, prims_graph

s0, s1 = sympy.symbols("s0 s1", integer=True, positive=True)


def _buf(name, size, dtype=torch.float32):
    return Buffer(name, Layout.contiguous(size, dtype, "cpu"))


def test_reduction_node_prints_readably():
    x, out = _buf("arg0", (s0, s1)), _buf("buf0", (s0,))
    node = reduction_node("node0", (out,), (s0,), (s1,), "amax", torch.float32,
                          lambda xv, rv: buffer_value(x).loader((xv[0], rv[0])))
    assert str(node) == textwrap.dedent("""\
        buf0: f32[s0] = reduction[s0] over [s1]
            tmp0 = load(arg0, r0 + s1*x0)
            tmp1 = reduction(amax, tmp0)
            store(buf0, x0, tmp1)""")


def test_torch_oracle_runs_a_hand_written_softmax_group():
    def max_body(h, x, r):
        h.store("m", x[0], h.reduction(torch.float32, torch.float32, "amax",
                                       h.load("a", s1 * x[0] + r[0])))

    def sum_body(h, x, r):
        e = h.exp(h.sub(h.load("a", s1 * x[0] + r[0]), h.load("m", x[0])))
        h.store("s", x[0], h.reduction(torch.float32, torch.float32, "sum", e))

    def out_body(h, x, r):
        e = h.exp(h.sub(h.load("a", s1 * x[0] + r[0]), h.load("m", x[0])))
        h.store("out", s1 * x[0] + r[0], h.div(e, h.load("s", x[0])))
    group = KernelGroup("softmax", (s0,), (s1,),
                        (GroupNode(max_body), GroupNode(sum_body), GroupNode(out_body)),
                        dict.fromkeys(("a", "m", "s", "out"), torch.float32))
    a = torch.randn(5, 7)
    bufs = {"a": a, "m": torch.empty(5), "s": torch.empty(5), "out": torch.empty(5, 7)}
    run_group_torch(group, bufs, {s0: 5, s1: 7})
    torch.testing.assert_close(bufs["out"], torch.softmax(a, -1))


def _lower(fn, shapes):
    graph, env, _ = prims_graph(fn, shapes)
    return GraphLowering(graph, Analyzer(env)).run(), env


def test_views_are_index_arithmetic_not_copies():
    lowering, _ = _lower(lambda x: P.exp(P.permute(P.slice(x, 1, 1, x.shape[1], 1), (1, 0))),
                         [("a", "b")])
    (node,) = lowering.nodes
    text = str(node)
    assert "load(arg0, s1*x1 + x0 + 1)" in text, text


def test_reshape_of_contiguous_data_indexes_linearly():
    lowering, _ = _lower(lambda x: P.neg(P.reshape(x, (x.shape[0] * x.shape[1],))),
                         [("a", "b")])
    (node,) = lowering.nodes
    assert "load(arg0, x0)" in str(node), str(node)


def test_pointwise_value_used_twice_is_inlined_when_cheap_realized_when_not():
    def cheap(x):
        y = P.add(x, 1.0)
        return P.mul(y, y)

    def recomputed(x):  # 5 ops loading 4 bytes to make 4: no more bytes than reading it back
        y = P.tanh(P.exp(P.sin(P.cos(P.add(x, 1.0)))))
        return P.mul(y, y)

    def wider_loads(x, z):  # loads 8 bytes to make 4: written once, read back
        y = P.tanh(P.exp(P.sin(P.cos(P.add(x, z)))))
        return P.mul(y, y)

    def long(x):  # more ops than RECOMPUTE_MAX_OPS: written once
        y = x
        for _ in range(30):
            y = P.sin(y)
        return P.mul(y, y)
    assert len(_lower(cheap, [("a",)])[0].nodes) == 1
    assert len(_lower(recomputed, [("a",)])[0].nodes) == 1
    assert len(_lower(wider_loads, [("a",), ("a",)])[0].nodes) == 2
    assert len(_lower(long, [("a",)])[0].nodes) == 2


def test_equal_iteration_spaces_are_decided_symbolically():
    env = ShapeEnv()
    a = env.create_symbol(4, LocalSource("a"))
    b = env.create_symbol(5, LocalSource("b"))
    assert Analyzer(env).equal(a * b, b * a)
    assert not Analyzer(env).equal(a, b)
    assert env.guards == [] or not env.guards


def _pointwise(name, src: Buffer, size, fn):
    out = _buf(name, size)
    value = Value(tuple(size), torch.float32, torch.device("cpu"),
                  lambda idx: fn(buffer_value(src).loader(idx)))
    return out, pointwise_node(f"node_{name}", out, value)


def test_nodes_over_equal_spaces_fuse_and_transposed_reads_do_not():
    x = _buf("arg0", (s0 * s1,))
    b1, n1 = _pointwise("buf1", x, (s0 * s1,), lambda v: ops.exp(v))
    b2, n2 = _pointwise("buf2", b1, (s1 * s0,), lambda v: ops.neg(v))
    steps = schedule([n1, n2])
    assert len(steps) == 1

    sq = _buf("arg1", (s0, s0))
    c1, m1 = _pointwise("buf3", sq, (s0, s0), lambda v: ops.exp(v))
    transposed = Value((s0, s0), torch.float32, torch.device("cpu"),
                       lambda idx: ops.neg(buffer_value(c1).loader((idx[1], idx[0]))))
    c2 = _buf("buf4", (s0, s0))
    m2 = pointwise_node("node_buf4", c2, transposed)
    assert len(schedule([m1, m2])) == 2


def test_reduction_fuses_with_its_epilogue_into_one_group():
    lowering, env = _lower(lambda x: decomposed(torch.softmax, x, -1), [("a", "b")])
    steps = finalize(schedule(lowering.nodes, Analyzer(env)), lowering.buffers,
                     {b.name for b in lowering.outputs})
    (group,) = steps
    assert group.is_reduction and [n.kind for n in group.nodes] == [
        "reduction", "reduction", "pointwise"]
    assert group.inputs == ("arg0",)
