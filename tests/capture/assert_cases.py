"""Compiled functions with `assert` statements, kept out of test modules: pytest rewrites the
asserts of test modules into code with `@py_assert` names, which is not what users compile."""


def asserts_even(x):
    assert x.shape[0] % 2 == 0, "needs an even batch"
    return x + 1
