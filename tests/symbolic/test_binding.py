"""The one binder (symbolic/binding.py): symbol values from a call's real inputs."""

from __future__ import annotations

import sympy
import torch

from symbolic.binding import SymbolReader, bind, binder_lines, symbol_readers

s0, s1, s2 = sympy.symbols("s0 s1 s2", integer=True, positive=True)


def test_first_bare_occurrence_wins_and_expressions_are_not_read():
    readers = symbol_readers([(2 * s0, s1), (s0, 3), None, s2, (s1,)])
    assert readers == (SymbolReader(s1, 0, 1), SymbolReader(s0, 1, 0), SymbolReader(s2, 3, None))
    values = bind(readers, (torch.empty(8, 5), torch.empty(4, 3), "x", 7, torch.empty(5)))
    assert values == {s1: 5, s0: 4, s2: 7}


def test_generated_lines_read_the_same_values():
    readers = symbol_readers([(s0, 3), s1])
    lines = binder_lines(readers, ["a", "b"])
    assert lines == ["s0 = a.shape[0]", "s1 = b"]
    scope = {"a": torch.empty(6, 3), "b": 11}
    exec("\n".join(lines), scope)  # noqa: S102 - our own generated text
    assert {s0: scope["s0"], s1: scope["s1"]} == bind(readers, (scope["a"], scope["b"]))


def test_without_unused_reads_drops_only_symbols_no_later_line_names():
    from symbolic.binding import without_unused_reads

    reads = ["    s1 = arg0.shape[0]", "    s10 = arg0.shape[1]", "    s2 = arg1.shape[0]"]
    lines = ["def call(in0, in1):", *reads, "    buf0 = empty((s10,), (1,))",
             "    k0(buf0.data_ptr(), s10)  # s2x", "    return (buf0,)"]
    kept = without_unused_reads(lines, reads)
    # s1 appears only inside s10 and s2 only inside s2x: neither is a use
    assert kept == [lines[0], reads[1], *lines[4:]], kept
