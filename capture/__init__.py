"""capture: a symbolic interpreter over CPython bytecode that builds a torch-level fx graph.

In: a frame (function, args). Out: Capture(graph, guards, env, inputs) or Unsupported(reason).
"""
