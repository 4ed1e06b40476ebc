"""symc: a dynamic-shape-first compiler for PyTorch.

    compiled = symc.compile(model)      # one compilation serves every sequence length
    print(symc.explain(compiled))       # entries, guards, graph breaks, recompile reasons
    print(symc.fuzz(fn, example_x))     # z3-chosen sizes at each guard's edges, compiled vs eager
    symc.check_errors()                 # waits for the GPU, raises a kernel error not yet raised
"""

from capture import CaptureError, Unsupported, mark_dynamic, mark_static
from inductor.runtime.error_flags import check_errors
from symc.backends import BACKENDS, BackendError, register_backend
from symc.cache import CompiledFunction, reset_all as reset
from symc.compile import CompiledModule, compile
from symc.config import config
from symc.explain import Explanation, explain
from symc.fuzz_report import FuzzReport
from symc.fuzzing import fuzz
from symc.version import __version__

__all__ = [
    "BACKENDS", "BackendError", "CaptureError", "CompiledFunction", "CompiledModule",
    "Explanation", "FuzzReport", "Unsupported", "__version__", "check_errors", "compile",
    "config", "explain", "fuzz",
    "mark_dynamic", "mark_static", "register_backend", "reset",
]
