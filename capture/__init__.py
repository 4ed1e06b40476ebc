"""capture: a symbolic interpreter over CPython bytecode that builds a torch-level fx graph.

In: a Python function and one call's arguments. Out: `Capture(graph, guards, env, inputs,
output)` or `Unsupported(reason, where)` (a graph break).

    cap = translate(lambda x: torch.relu(x) * x.shape[1], (torch.randn(4, 3),))
    print(cap.graph)    # x: f32[s0, s1] -> relu -> mul(relu, s1) -> output
"""

from capture.errors import CaptureError, Unsupported
from capture.marks import mark_dynamic, mark_static, marks_of
from capture.translate import Capture, OutputSpec, frame_locals, translate

__all__ = [
    "Capture", "CaptureError", "OutputSpec", "Unsupported", "frame_locals", "mark_dynamic",
    "mark_static", "marks_of", "translate",
]
