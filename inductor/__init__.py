"""inductor: prims graphs -> loop-level IR -> fused, size-generic Triton and C++/OpenMP kernels.

In: a prims fx graph with symbolic metas and its ShapeEnv. Out: a CompiledGraph, callable on real
tensors, whose kernels take the symbolic sizes as arguments.
"""
