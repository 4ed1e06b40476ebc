"""Check capture/resume_code.py on the running interpreter without torch (3.11 and 3.12).

    python scripts/check_resume_code.py      # prints one line per case, exits 1 on a mismatch

Each case resumes a plain function right after its first call to `g` (the call's result given
as the top of the stack) and compares with calling the function itself.
"""

import dis
import os
import sys
import types

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "capture"))
import resume_code as rc  # noqa: E402

LOG = []


def g(v=1):
    return v * 2


class Ctx:
    def __enter__(self):
        LOG.append("enter")
        return self

    def __exit__(self, *exc):
        LOG.append("exit")
        return False


def f_simple(x):
    a = x + 1
    b = g(a)
    return (b + a) * 3


def f_live_stack(x):
    return x + g(x) * 2


def f_kw(x):
    return x + g(v=x)


def f_loop(x):
    t = 0
    for i in range(4):
        t = t + g(i + x)
    return t


def f_with(x):
    with Ctx():
        y = g(x)
        y = y + 1
    return y + 10


class Reenter:
    """A with block's exit that the resume prologue calls with no arguments to re-enter."""

    def __call__(self, *exc):
        LOG.append("exit" if exc else "reenter")
        return False


def f_closure(x):
    return x + g(x) + SCALE


SCALE = 5


# (function, stack below the result: "value"/"null"/"iter" and their values, locals, result of g)
def cases(x):
    return [
        (f_simple, [], {"a": x + 1}, g(x + 1)),
        (f_live_stack, [("value", x)], {}, g(x)),
        (f_kw, [("value", x)], {}, g(x)),
        # the first iteration: i = 0; the iterator holds 1, 2, 3; stack [iter, t(on BINARY_OP)]
        (f_loop, [("iter", (1, 2, 3)), ("value", 0)], {"t": 0, "i": 0, "x": x}, g(0 + x)),
        (f_with, [("value", Ctx().__exit__)], {"x": x}, g(x)),
        (f_with, [("with", Reenter())], {"x": x}, g(x)),
        (f_closure, [("value", x)], {}, g(x)),
    ]


def first_call(code) -> int:
    calls = [n for n, i in enumerate(dis.get_instructions(code)) if i.opname == "CALL"
             and n > 0]
    if code.co_name in ("f_with", "f_loop"):
        return calls[1]  # after Ctx() or range(4)
    return calls[0]


def main() -> int:
    bad = 0
    for x in (1, 4, 7):
        for fn, below, local_values, result in cases(x):
            code = fn.__code__
            index = first_call(code)
            assert rc.why_not_resumable(code, index) is None, rc.why_not_resumable(code, index)
            layout = tuple(kind for kind, _ in below) + ("value",)
            live = tuple(n for n in code.co_varnames
                         if n in rc.live_locals(code, index + 1) and n in local_values)
            new = rc.resume_code(code, index + 1, layout, live, f"{fn.__name__}_resume")
            resumed = types.FunctionType(new, fn.__globals__, new.co_name)
            args = [v for _, v in below] + [result] + [local_values[n] for n in live]
            LOG.clear()
            got = resumed(*args)
            got_log = [e for e in LOG if e != "reenter"]
            assert ("reenter" in LOG) == ("with" in layout), LOG
            LOG.clear()
            want = fn(x)
            want_log = [e for e in LOG if e != "enter"]
            same = got == want and got_log == want_log
            bad += not same
            print(f"{sys.version.split()[0]} {fn.__name__}({x}): {got} vs {want} "
                  f"{'ok' if same else 'MISMATCH'}")
            again, at = rc.origin(new, index + 1 + len(layout) + 1)
            assert again is code, "origin must map back to the original code"
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
