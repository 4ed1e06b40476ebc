"""inductor: prims graphs -> loop-level IR -> fused, size-generic Triton and C++/OpenMP kernels.

In: a prims fx graph with symbolic metas and its ShapeEnv. Out: a CompiledGraph, callable on real
tensors, whose kernels take the symbolic sizes as arguments.

    cg = inductor.compile_graph(graph, env)        # softmax over [s0, s1]
    print(cg.source)    # def call(in0): ... k0_red_node0(arg0.data_ptr(), buf2.data_ptr(), s0, s1)
"""

from inductor.compile import CompiledGraph, choose_backend, compile_graph
from inductor.ir import LoweringError
from inductor.lowerings import LOWERINGS

__all__ = ["LOWERINGS", "CompiledGraph", "LoweringError", "choose_backend", "compile_graph"]
