"""The symbolic facade is passed explicitly and symbols are bound by one binder (issue 19).

Source scans, like tests/test_layering.py: the ShapeEnv is never read from a context variable
(it reaches prims through the tracer that runs them, `MetaTracer(env)` / `GraphTracer(graph, env)`),
a missing env is an empty ShapeEnv and never `None`, and symbol values are only read from inputs
or frames in symbolic/binding.py.
"""

import ast
import io
import pathlib
import re
import tokenize

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
PACKAGES = ("symbolic", "guards", "prims", "autograd_aot", "inductor", "capture", "symc")

# Every context variable of the code base, by name, and what it holds. None of them holds a
# ShapeEnv or an Analyzer: adding one here needs a reason that is not "reach the env".
CONTEXT_VARIABLES = {
    "symc_user_location": "symbolic/shape_env.py",  # the user's file:line for recorded guards
    "symc_autocast": "prims/autocast.py",  # the caller's autocast state
    # CPU autocast with CUDA's op lists: the CPU stand-in of a GPU step (kernel_census --bf16)
    "symc_cpu_as_cuda": "prims/autocast.py",
    "symc_default_device_reads": "prims/devices.py",  # factory calls that read the default device
    "symc_prim_tracer": "prims/core.py",  # the dispatch mode of prim calls (it carries `an`)
    "symc_ops_handler": "inductor/ops.py",  # the kernel ops handler being printed with
}

# An env reached through a context: the old accessor names and `with env:` blocks.
ENV_CONTEXT = re.compile(r"\bcurrent_env\b|_CURRENT_ENV\b|\bwith\s+[\w.]*env\s*[:,]")
# A missing env as None instead of an empty ShapeEnv (an Analyzer's `an.env` included).
ENV_IS_NONE = re.compile(r"\benv\s+is\s+(not\s+)?None\b")
# The files that may still test `env is None`: the Analyzer itself (codegen unit tests build
# one without an env over caller ranges only).
ENV_NONE_ALLOWED = {"symbolic/analyzer.py"}


def sources():
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            yield str(path.relative_to(ROOT)), path.read_text()


def test_scan_finds_the_files():
    names = [name for name, _ in sources()]
    assert "prims/sizes.py" in names and "capture/meta.py" in names and len(names) > 100


def test_no_shape_env_context_variable():
    bad = [f"{name}:{text.count(chr(10), 0, m.start()) + 1}: {m.group(0)}"
           for name, text in sources() for m in ENV_CONTEXT.finditer(text)]
    assert not bad, "the ShapeEnv must be passed explicitly:\n" + "\n".join(bad)


def _context_variables(text: str) -> list[str]:
    names = []
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, ast.Call) and getattr(node.func, "attr", None) == "ContextVar":
            first = node.args[0] if node.args else None
            names.append(first.value if isinstance(first, ast.Constant) else "<dynamic>")
    return names


def test_context_variables_are_the_known_ones():
    found = {var: name for name, text in sources() for var in _context_variables(text)}
    assert found == CONTEXT_VARIABLES


def test_shape_env_is_no_context_manager():
    from symbolic import ShapeEnv

    assert not hasattr(ShapeEnv, "__enter__") and not hasattr(ShapeEnv, "__exit__")


def test_no_env_is_none_branches():
    bad = [f"{name}:{text.count(chr(10), 0, m.start()) + 1}" for name, text in sources()
           if name not in ENV_NONE_ALLOWED for m in ENV_IS_NONE.finditer(text)]
    assert not bad, "a graph without symbols has an empty ShapeEnv, not None:\n" + "\n".join(bad)


# Reading a symbol's value from a source or building a reader table: only the binder does it.
BINDER = "symbolic/binding.py"
BINDING = re.compile(r"SymbolReader\(|\.source\.read\(|lambda \w+: \w+\.read\(L|"
                     r"bind_symbols\(lambda")


def code_only(text: str) -> str:
    """`text` with its strings and comments blanked (line numbers kept): docstrings may show
    examples of the binder's API."""
    lines = text.splitlines(keepends=True)
    for tok in reversed(list(tokenize.generate_tokens(io.StringIO(text).readline))):
        if tok.type in (tokenize.STRING, tokenize.COMMENT):
            (r0, c0), (r1, c1) = tok.start, tok.end
            for r in range(r0, r1 + 1):
                line = lines[r - 1]
                lo = c0 if r == r0 else 0
                hi = c1 if r == r1 else len(line.rstrip("\n"))
                lines[r - 1] = line[:lo] + " " * (hi - lo) + line[hi:]
    return "".join(lines)


def test_code_only_blanks_strings_and_comments():
    assert code_only('x = "SymbolReader(a)"  # SymbolReader(b)\nSymbolReader(c)\n') \
        .count("SymbolReader(") == 1


def test_the_binder_is_the_only_one():
    bad = [f"{name}:{code.count(chr(10), 0, m.start()) + 1}: {m.group(0)}"
           for name, code in ((n, code_only(t)) for n, t in sources()) if name != BINDER
           for m in BINDING.finditer(code)]
    assert not bad, f"bind symbol values through {BINDER}:\n" + "\n".join(bad)


def test_bind_symbols_is_the_binders_frame_reader():
    import torch

    from symbolic import LocalSource, ShapeEnv, SizeSource
    from symbolic.binding import bind, bind_frame, source_readers

    env = ShapeEnv()
    s0 = env.create_symbol(5, SizeSource(LocalSource("x"), 0))
    s1 = env.create_symbol(7, SizeSource(LocalSource("y"), 1))
    L = {"x": torch.empty(11, 2), "y": torch.empty(3, 13)}
    assert env.bind_symbols(L) == bind_frame(env.symbols, L) == {s0: 11, s1: 13}
    readers = source_readers(env.symbols, [LocalSource("y"), LocalSource("x")])
    assert bind(readers, [L["y"], L["x"]]) == {s0: 11, s1: 13}


@pytest.mark.parametrize("tracer", ["meta", "graph"])
def test_tracers_need_the_env(tracer):
    import torch.fx as fx

    from prims import GraphTracer, MetaTracer, PrimError

    with pytest.raises(PrimError, match="ShapeEnv"):
        MetaTracer(None) if tracer == "meta" else GraphTracer(fx.Graph(), None)
