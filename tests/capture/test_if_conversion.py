"""If-conversion of an `if` on an undecided size condition (capture/if_conversion.py).

A branch whose arms are pure tensor code with zero-safe gradients compiles once for every
length (the arms merged by `where`); any arm that could act outside itself, differ in shape,
poison a gradient or check a size keeps the guard (two compilations over lengths 7, 1, 9),
and eager's results either way.
"""

from __future__ import annotations

import pytest
import torch

import symc
from tests.device import DEVICE

LENGTHS = (7, 1, 9, 8)


def _scores(x, w):
    return (x @ w) @ x.T                      # [n, n], sizes tied to x's


def _causal(x, w):
    p = _scores(x, w)
    if x.shape[0] > 1:
        n, device = x.shape[0], x.device
        mask = torch.arange(n, device=device)[:, None] >= torch.arange(n, device=device)[None, :]
        m = torch.where(mask.view(1, n, n), p, -1e9)[0]
    else:
        m = p
    return (m.softmax(-1) @ x).sum()


def _negated_and_merged(x, w):
    p = _scores(x, w)
    n = x.shape[0]
    long = n > 1 and n != 8                   # one condition: And(s0 > 1, Ne(s0, 8))
    m = p if not long else torch.where(p > 0, p, p - 1)       # POP_JUMP_IF_TRUE, arms swapped
    return (m.softmax(-1) @ x).sum()


def _masked(p, n):
    if n > 1:                                 # both arms return (3.12 compiles T5's so)
        mask = torch.arange(n, device=p.device)[:, None] >= torch.arange(n, device=p.device)
        return torch.where(mask, p, -1e9).contiguous()
    return p.contiguous()


def _calls_a_function_whose_arms_return(x, w):
    return (_masked(_scores(x, w), x.shape[0]).softmax(-1) @ x).sum()


def _tuple_per_arm(x, w):
    p = _scores(x, w)
    n = x.shape[0]
    # each arm builds its own tuple (3.12 compiles `return (a if c else b), flag` so, into
    # each arm); the size relation in it is computed in each arm, equal but not the same object
    pair = (torch.where(p > 0, p, p - 1), n > 3) if n > 1 else (p, n > 3)
    return (pair[0].softmax(-1) @ x).sum()


def _mutates_a_tensor(x, w):
    p = _scores(x, w)
    if x.shape[0] > 1:
        p.add_(1.0)
    return p.softmax(-1).sum(0)


def _mutates_a_list(x, w):
    p, seen = _scores(x, w), []
    if x.shape[0] > 1:
        seen.append(1)
    return p.softmax(-1).sum(0) * len(seen)


def _differs_in_shape(x, w):
    p = _scores(x, w)
    if x.shape[0] > 1:
        m = p[:, :1]
    else:
        m = p
    return m.softmax(-1).sum(0)


def _takes_a_log(x, w):
    p = _scores(x, w).softmax(-1)
    if x.shape[0] > 1:
        m = torch.log(p)
    else:
        m = p
    return m.sum(0)


def _prints(x, w):
    p = _scores(x, w)
    if x.shape[0] > 1:
        print("long")
        m = p - 1
    else:
        m = p
    return m.softmax(-1).sum(0)


def _checks_a_size(x, w):
    p = _scores(x, w)
    if x.shape[0] > 1:
        m = p + p[1]                          # eager indexes row 1 only when there is one
    else:
        m = p
    return m.softmax(-1).sum(0)


def _negative_size_elsewhere(x, w):
    p = _scores(x, w)
    if x.shape[0] > 1:
        _pad = torch.zeros(x.shape[0] - 2, device=x.device)     # -1 elements at length 1
        m = p - 1
    else:
        m = p
    return m.softmax(-1).sum(0)


def _advanced_index(x, w):
    p = _scores(x, w)
    if x.shape[0] > 1:
        m = p + p[torch.ones(1, dtype=torch.long, device=x.device)]    # row 1: none at length 1
    else:
        m = p
    return m.softmax(-1).sum(0)


def _writes_the_merged_tensor(x, w, p):
    if x.shape[0] > 1:
        m = torch.where(torch.ones_like(p, dtype=torch.bool), p, 0.0)
    else:
        m = p                                 # eager's write below reaches `p` here
    m.add_(1.0)
    return m * 2, p * 3


def _breaks_with_the_merged_tensor_live(x, w, p):
    if x.shape[0] > 1:
        m = torch.where(torch.ones_like(p, dtype=torch.bool), p, 0.0)
    else:
        m = p
    print("a break")                          # a resume function would get `m` apart from `p`
    m.add_(1.0)
    return m * 2, p * 3


def _run(fn, extra=False):
    """Compile `fn`, check it against eager (values, gradients) at each length, explain."""
    compiled = symc.compile(fn, backend="aot_eager")
    torch.manual_seed(0)
    w = torch.randn(4, 4, device=DEVICE, requires_grad=True)
    w_ref = w.detach().clone().requires_grad_()
    for n in LENGTHS:
        x = torch.randn(n, 4, device=DEVICE, requires_grad=True)
        x_ref = x.detach().clone().requires_grad_()
        args = [x, w] + ([torch.randn(n, n, device=DEVICE)] if extra else [])
        ref_args = [x_ref, w_ref] + ([args[2].clone()] if extra else [])
        got, want = compiled(*args), fn(*ref_args)
        torch.testing.assert_close(got, want, msg=f"length {n}")
        if extra:
            torch.testing.assert_close(args[2], ref_args[2], msg=f"length {n}: written input")
            continue
        got.sum().backward()
        want.sum().backward()
        torch.testing.assert_close(x.grad, x_ref.grad, msg=f"length {n}: grad of x")
        torch.testing.assert_close(w.grad, w_ref.grad, msg=f"length {n}: grad of w")
    return symc.explain(compiled)


@pytest.mark.parametrize("fn", [_causal, _negated_and_merged,
                                _calls_a_function_whose_arms_return, _tuple_per_arm],
                         ids=lambda fn: fn.__name__.strip("_"))
def test_a_pure_size_branch_compiles_once_with_eagers_values_and_gradients(fn):
    report = _run(fn)
    assert (report.compiles, report.graph_breaks) == (1, 0), str(report)


@pytest.mark.parametrize("fn", [_mutates_a_tensor, _mutates_a_list, _differs_in_shape,
                                _takes_a_log, _checks_a_size, _negative_size_elsewhere,
                                _advanced_index],
                         ids=lambda fn: fn.__name__.strip("_"))
def test_an_arm_that_is_not_pure_keeps_the_guard(fn):
    report = _run(fn)
    assert (report.compiles, report.graph_breaks) == (2, 0), str(report)
    assert any("s0 >= 2" in reason for reason in report.recompile_reasons), \
        report.recompile_reasons


def test_an_arm_that_prints_keeps_the_guard(capsys):
    report = _run(_prints)
    assert any("s0 >= 2" in reason for reason in report.recompile_reasons), \
        report.recompile_reasons
    assert capsys.readouterr().out.count("long") == 2 * sum(n > 1 for n in LENGTHS)  # both runs


@pytest.mark.parametrize("fn", [_writes_the_merged_tensor, _breaks_with_the_merged_tensor_live],
                         ids=lambda fn: fn.__name__.strip("_"))
def test_a_merged_tensor_is_never_split_from_what_it_may_alias(fn):
    """`m` is `p` itself at length 1 (eager's write changes `p`) and a new tensor otherwise:
    the write, or a break while `m` is live, keeps the frame eager (not resumed)."""
    report = _run(fn, extra=True)
    assert report.graph_breaks >= 1 and all(
        "not resumed" in b.reason for b in report.breaks), str(report)
