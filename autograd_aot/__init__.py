"""autograd_aot: ahead-of-time differentiation of prims graphs.

In: a forward prims graph and which inputs need grad. Out: forward and backward prims graphs
(saved values chosen by min-cut) and a torch.autograd.Function that runs them.
"""
