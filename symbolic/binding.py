"""Binding symbol values from a call's real inputs: the one binder, read one way.

    readers = symbol_readers([(s0, 3), s1, None])   # input 0 a tensor [s0, 3], input 1 a symbol
    readers == (SymbolReader(s0, 0, 0), SymbolReader(s1, 1, None))
    bind(readers, (torch.empty(5, 3), 7)) == {s0: 5, s1: 7}
    binder_lines(readers, ["in0", "in1"]) == ["s0 = in0.shape[0]", "s1 = in1"]
    source_readers(env.symbols, capture.inputs)     # readers from where capture found each size
    bind_frame(env.symbols, L, G) == {s0: 5, ...}   # each symbol read from its frame source

Inside a graph, each symbol is read from the first input dim whose size is exactly that symbol,
or from an input that is the symbol itself (a symbol placeholder). The prims interpreter,
autograd's runtime, the eager and prims backends and inductor's wrapper prologue all bind through
it. Around the graph (outputs rebuilt, views replayed, resumed frames), the runtime binds from
the frame's locals through `ShapeEnv.bind_symbols(L, G)`, which is `bind_frame` here.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import sympy

from symbolic.errors import SymbolicError
from symbolic.source import SizeSource


@dataclass(frozen=True, slots=True)
class SymbolReader:
    symbol: sympy.Symbol
    input: int
    dim: int | None  # None: the input is the symbol's value

    def read(self, inputs) -> int:
        value = inputs[self.input]
        return int(value if self.dim is None else value.shape[self.dim])

    def text(self, name: str) -> str:
        """Python reading the value from the input named `name`."""
        return name if self.dim is None else f"{name}.shape[{self.dim}]"


def symbol_readers(inputs) -> tuple[SymbolReader, ...]:
    """Readers for `inputs`: per input a shape (sequence of sizes), a symbol, or anything else
    (ignored); the first place a symbol appears bare wins."""
    readers: dict = {}
    for i, item in enumerate(inputs):
        if isinstance(item, sympy.Symbol):
            readers.setdefault(item, SymbolReader(item, i, None))
        elif isinstance(item, (tuple, list)):
            for d, size in enumerate(item):
                if isinstance(size, sympy.Symbol):
                    readers.setdefault(size, SymbolReader(size, i, d))
    return tuple(readers.values())


def bind(readers, inputs) -> dict[sympy.Symbol, int]:
    """Each reader's symbol -> its value in this call's `inputs`."""
    return {r.symbol: r.read(inputs) for r in readers}


def binder_lines(readers, names) -> list[str]:
    """Generated assignments `sN = <input>.shape[d]`, for a prologue run on every call."""
    return [f"{r.symbol.name} = {r.text(names[r.input])}" for r in readers]


def without_unused_reads(lines: list[str], reads: list[str]) -> list[str]:
    """Generated `lines` less those of `reads` (binder_lines' assignments, as they appear in
    `lines`) whose symbol no later line uses: a layer norm's weight size, guarded equal to
    x's last, costs two attribute reads a call for nothing."""
    unused = set()
    for read in reads:
        name = read.split("=", 1)[0].strip()
        used = re.compile(rf"\b{re.escape(name)}\b")
        start = lines.index(read) + 1
        if not any(used.search(line) for line in lines[start:]):
            unused.add(read)
    return [line for line in lines if line not in unused]


def source_readers(symbols, sources) -> tuple[SymbolReader, ...]:
    """Readers for `symbols` (symbol -> SymbolInfo) from the graph inputs named by `sources`:
    each symbol is read from the input its SizeSource's base names, at that dim."""
    index_of = {str(src): i for i, src in enumerate(sources)}
    readers = []
    for symbol, info in symbols.items():
        source = info.source
        if not isinstance(source, SizeSource) or str(source.base) not in index_of:
            raise SymbolicError(f"symbol {symbol}: expected a graph input size, found it read "
                                f"from {source}")
        readers.append(SymbolReader(symbol, index_of[str(source.base)], source.dim))
    return tuple(readers)


def bind_frame(symbols, L: dict, G: dict | None = None) -> dict[sympy.Symbol, int]:
    """Each of `symbols` (symbol -> SymbolInfo) valued in a frame: its source read in `L`/`G`."""
    return {s: int(info.source.read(L, G)) for s, info in symbols.items()}
