"""`sink_to_first_use` (autograd_aot/split.py): the backward's recomputed chains move to just
before their first user, so one block's recomputed activations are not all alive at once."""

import torch
import torch.fx as fx

from autograd_aot.split import sink_to_first_use


def order(graph: fx.Graph) -> list[str]:
    return [n.name for n in graph.nodes]


def test_independent_chain_moves_to_its_first_user():
    def f(saved, tangent):
        r = torch.sin(saved)          # a recomputation: depends on a saved value only
        r2 = torch.exp(r)
        g = torch.cos(tangent) * 2    # the gradient path
        g2 = g + 1
        return g2 * r2
    gm = fx.symbolic_trace(f)
    assert order(gm.graph).index("sin") < order(gm.graph).index("cos")
    sink_to_first_use(gm.graph)
    gm.graph.lint()
    names = order(gm.graph)
    assert names.index("add") < names.index("sin") < names.index("exp") < names.index("mul_1")
    gm.recompile()
    for n in (1, 2, 7):
        s, t = torch.randn(n), torch.randn(n)
        torch.testing.assert_close(gm(s, t), f(s, t))


def test_random_ops_keep_their_place():
    def f(x):
        noise = torch.rand_like(x)
        y = torch.cos(x) + 1
        return y * noise
    gm = fx.symbolic_trace(f)
    before = order(gm.graph)
    sink_to_first_use(gm.graph)
    gm.graph.lint()
    assert order(gm.graph).index("rand_like") == before.index("rand_like")
