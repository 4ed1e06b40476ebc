"""`and`/`or` of an undecided size relation (capture/short_circuit.py) in both bytecodes.

Python 3.11 compiles `a and b` to JUMP_IF_FALSE_OR_POP; 3.12 to `COPY 1; POP_JUMP_IF_FALSE join;
POP_TOP` (an operand jump). The 3.12 instructions of `_and_or` below, as `dis` lists them on 3.12.1,
are replayed through the interpreter on 3.11 too, so both forms are tested on either version
(tests/capture/test_recompile_policy.py runs the real bytecode of the running version).
"""

from __future__ import annotations

import dis
import sys
import types

import pytest
import torch

import capture.interpreter
import symc
from tests.device import DEVICE


def _and_or(x, mask, t):
    causal = t > 1 and mask is None and True
    either = t > 2 or mask is not None
    return (x + 1 if causal else x - 1), either, causal


# (opname, arg, argval, offset[, argrepr]) of `dis.get_instructions(_and_or)` on CPython 3.12.1
_AND_OR_312 = [
    ("RESUME", 0, 0, 0), ("LOAD_FAST", 2, "t", 2), ("LOAD_CONST", 1, 1, 4),
    ("COMPARE_OP", 68, ">", 6), ("COPY", 1, 1, 10), ("POP_JUMP_IF_FALSE", 8, 30, 12),
    ("POP_TOP", None, None, 14), ("LOAD_FAST", 1, "mask", 16), ("LOAD_CONST", 0, None, 18),
    ("IS_OP", 0, 0, 20), ("COPY", 1, 1, 22), ("POP_JUMP_IF_FALSE", 2, 30, 24),
    ("POP_TOP", None, None, 26), ("LOAD_CONST", 2, True, 28), ("STORE_FAST", 3, "causal", 30),
    ("LOAD_FAST", 2, "t", 32), ("LOAD_CONST", 3, 2, 34), ("COMPARE_OP", 68, ">", 36),
    ("COPY", 1, 1, 40), ("POP_JUMP_IF_TRUE", 4, 52, 42), ("POP_TOP", None, None, 44),
    ("LOAD_FAST", 1, "mask", 46), ("LOAD_CONST", 0, None, 48), ("IS_OP", 1, 1, 50),
    ("STORE_FAST", 4, "either", 52), ("LOAD_FAST", 3, "causal", 54),
    ("POP_JUMP_IF_FALSE", 8, 74, 56), ("LOAD_FAST", 0, "x", 58), ("LOAD_CONST", 1, 1, 60),
    ("BINARY_OP", 0, 0, 62, "+"), ("LOAD_FAST", 4, "either", 66), ("LOAD_FAST", 3, "causal", 68),
    ("BUILD_TUPLE", 3, 3, 70), ("RETURN_VALUE", None, None, 72), ("LOAD_FAST", 0, "x", 74),
    ("LOAD_CONST", 1, 1, 76), ("BINARY_OP", 10, 10, 78, "-"), ("LOAD_FAST", 4, "either", 82),
    ("LOAD_FAST", 3, "causal", 84), ("BUILD_TUPLE", 3, 3, 86), ("RETURN_VALUE", None, None, 88),
]


def _instruction(opname, arg, argval, offset, argrepr=""):
    fields = dict(opname=opname, opcode=dis.opmap.get(opname, 0), arg=arg, argval=argval,
                  argrepr=argrepr, offset=offset, starts_line=None, is_jump_target=False,
                  positions=None)
    return dis.Instruction(**{k: v for k, v in fields.items() if k in dis.Instruction._fields})


@pytest.fixture(params=["running", "3.12"])
def bytecode(request, monkeypatch):
    """Run `_and_or` as the running Python compiled it, or as 3.12 does (replayed)."""
    if request.param == "3.12" and sys.version_info < (3, 12):
        replay = [_instruction(*row) for row in _AND_OR_312]
        real = dis.get_instructions

        def get_instructions(code, *args, **kwargs):
            return iter(replay) if code is _and_or.__code__ else real(code, *args, **kwargs)

        monkeypatch.setattr(capture.interpreter, "dis", types.SimpleNamespace(
            get_instructions=get_instructions, Bytecode=dis.Bytecode, cmp_op=dis.cmp_op))
    return request.param


@pytest.mark.parametrize("with_mask", [True, False])
def test_and_or_of_an_int_relation_is_merged_not_decided(bytecode, with_mask):
    compiled = symc.compile(_and_or, backend="aot_eager")
    for t in (7, 1, 9, 2, 3, 40):
        x = torch.randn(3, device=DEVICE)
        mask = torch.ones(3, device=DEVICE) if with_mask else None
        got, want = compiled(x, mask, t), _and_or(x, mask, t)
        torch.testing.assert_close(got[0], want[0])
        assert got[1:] == want[1:] and [type(v) for v in got[1:]] == [bool, bool], (t, got)
    report = symc.explain(compiled)
    assert report.graph_breaks == 0, report.breaks
    # with a mask `t > 1 and False` is False, `t > 2 or True` True: one entry for every t; without
    # one the `if causal` decides t > 1, and returning `either` decides t > 2: t = 1, t = 2, t >= 3
    assert report.compiles == (1 if with_mask else 3), report.recompile_reasons


def _masking(x, mask, k):
    # transformers' masking_utils: `(q_length == 1 or kv_length == q_length) and (mask ...)`,
    # then sdpa_attention's `if is_causal and attention_mask is None and q > 1 and kv > q`
    q, kv = x.size(0), k.size(0)
    skip = False
    if (q == 1 or kv == q) and (mask is None or mask.dtype == torch.bool):
        skip = True
    causal = q > 1 and mask is None
    if causal and mask is None and q > 1 and kv > q:
        return x[:1] * 2, skip
    return x + 1, skip


@pytest.mark.parametrize("with_mask", [False, True])
def test_if_on_and_or_chains_decides_the_merged_condition(with_mask):
    compiled = symc.compile(_masking, backend="aot_eager")
    for q in (7, 1, 9, 2, 40):
        x, k = torch.randn(q, 3, device=DEVICE), torch.randn(q, 3, device=DEVICE)
        mask = torch.ones(q, dtype=torch.bool, device=DEVICE) if with_mask else None
        got, want = compiled(x, mask, k), _masking(x, mask, k)
        torch.testing.assert_close(got[0], want[0])
        assert got[1] is want[1] is True
    # `q == 1 or kv == q` is true (kv and q are one size) and `... and kv > q` false: no guard on
    # q, one entry for lengths 1 and up
    report = symc.explain(compiled)
    assert report.graph_breaks == 0, report.breaks
    assert report.compiles == 1, report.recompile_reasons


def _chain_decides(x, k):
    # the merged conditions still decide where they must: `q == 1 or kv == 2` by value
    q, kv = x.size(0), k.size(0)
    if q == 1 or kv == 2:
        return x + 1
    if q > 3 and kv > 3:
        return x * 2
    return x - 1


def test_if_on_or_chain_keeps_eagers_answers():
    compiled = symc.compile(_chain_decides, backend="aot_eager")
    for q, kv in ((7, 5), (1, 5), (7, 2), (2, 3), (5, 5), (4, 1), (1, 2), (9, 9)):
        x, k = torch.randn(q, device=DEVICE), torch.randn(kv, device=DEVICE)
        torch.testing.assert_close(compiled(x, k), _chain_decides(x, k))
    assert symc.explain(compiled).graph_breaks == 0


def _causal_attention(q, k, v):
    causal = q.size(-2) > 1 and True     # transformers: `q_length > 1 and mask is None and ...`
    return torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=causal)


def _self_attention(x, w):
    q, k, v = (x @ w[i] for i in range(3))   # as many keys as queries
    return _causal_attention(q, k, v)


@pytest.mark.parametrize("backend", ["eager", "aot_eager", "inductor"])
def test_sdpa_causal_flag_of_the_length_is_true_for_every_length(backend):
    """With as many keys as queries, `is_causal=(L > 1)` equals True at every L (a causal mask
    over one key keeps it): one entry for lengths 7, 1, 9, forward and backward as eager."""
    compiled = symc.compile(_self_attention, backend=backend)
    for n in (7, 1, 9, 2, 13):
        x = torch.randn(2, 2, n, 4, device=DEVICE, requires_grad=True)
        w = torch.randn(3, 4, 4, device=DEVICE, requires_grad=True)
        refs = [t.detach().clone().requires_grad_() for t in (x, w)]
        got, want = compiled(x, w), _self_attention(*refs)
        torch.testing.assert_close(got, want)
        got.square().sum().backward()
        want.square().sum().backward()
        for a, b in zip((x, w), refs):
            torch.testing.assert_close(a.grad, b.grad)
    report = symc.explain(compiled)
    assert (report.compiles, report.graph_breaks) == (1, 0), report.recompile_reasons


def test_sdpa_causal_flag_is_decided_when_keys_differ():
    """With S keys and L queries unrelated, L = 1 and S = 5 is not causal in eager (True would
    keep one key): the flag is decided and guarded."""
    compiled = symc.compile(_causal_attention, backend="aot_eager")
    for length, keys in ((4, 6), (1, 5), (3, 3), (1, 1), (5, 2)):
        q = torch.randn(1, 2, length, 4, device=DEVICE)
        k, v = (torch.randn(1, 2, keys, 4, device=DEVICE) for _ in range(2))
        torch.testing.assert_close(compiled(q, k, v), _causal_attention(q, k, v))
    assert symc.explain(compiled).compiles == 2
