"""symc: a dynamic-shape-first compiler for PyTorch.

    compiled = symc.compile(model)      # one compilation serves every sequence length
    print(symc.explain(compiled))       # entries, guards, graph breaks, recompile reasons
"""

from symc.version import __version__

__all__ = ["__version__"]
