"""Functions whose frames a graph break splits (used by test_resume.py; lines are asserted)."""

from __future__ import annotations

import numpy as np
import torch

# `print` is the break in most cases: a call with a side effect capture never puts in a graph.


def break_at_start(x):
    print("start")
    return x * 2 + 1


def break_in_middle(x):
    y = x.relu() + 1
    print("middle")
    return (y * x).sum(0)


def break_at_end(x):
    y = torch.tanh(x) * 3
    print("end")
    return y


def live_stack_value(x):
    return (x * 2).sum(0) + passthrough(x).sum(0)


def passthrough(t):
    print("passthrough")
    return t


def helper(t):
    t = t + 1
    print("helper")
    return t * 3


def break_in_inlined_call(x):
    y = x.relu()
    z = helper(y)
    return z - y


def break_in_loop(x):
    for i in range(3):
        x = x * 2 + i
        print(i)
    return x


def break_in_with_block(x):
    with torch.no_grad():
        y = x * 2
        print("with")
        y = y + 1
    return y * x


def data_dependent_branch(x):
    y = x * 3
    if y.abs().sum() >= 0:
        y = y + 1
    else:
        y = y - 1
    return y.mean(0)


def item_as_value(x):
    zero = (x * 0).sum().item()
    return x + zero


def mask_index(x):
    kept = x[x.abs() >= 0]
    return kept.sum() + x.mean()


def nonzero_rows(x):
    idx = torch.nonzero(x.abs() >= 0)
    return idx.sum(0) + x.shape[1]


def numpy_call(x):
    y = x * 2
    z = torch.from_numpy(np.tanh(y.numpy()))
    return z + x


def two_breaks(x):
    y = x + 1
    print("first")
    y = y * 2
    print("second")
    return y - x


def kwargs_call(x):
    y = x.sin()
    print(y.shape[1], sep="-")
    return y.cos()


def branch_on_mask_both_ways(x):
    if (x > 0).any():
        return x + 1
    return x - 1


def size_int_live(x):
    n = x.shape[0]
    print(n)
    return x * n


def break_in_try(x):
    y = x + 1
    try:
        print("try")
    except ValueError:
        pass
    return y * 2


def long_loop(x):
    for i in range(300):
        x = x + 1
        print(i)
    return x
