"""`symc fuzz module:function --example EXPR ...`: fuzz a function's sizes, compiled vs eager.

    symc fuzz mypkg.layers:attention --example 'torch.randn(2, 16, 64)' -n 50
    symc fuzz path/to/model.py:build_model --example 'idx=torch.randint(0, 100, (2, 9))'

Each `--example` is a Python expression (`torch` is in scope); `name=EXPR` passes it by keyword.
The target is the function (or nn.Module instance) to call. Prints the report (--json: as JSON)
and exits 1 when any case failed.
"""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import pathlib
import re
import sys

from symc.cli import subcommand

_KEYWORD = re.compile(r"^\s*([A-Za-z_]\w*)\s*=(?!=)(.*)$", re.S)


def _configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("target", help="module:function (or path/to/file.py:function)")
    parser.add_argument("--example", action="append", default=[], metavar="EXPR",
                        help="an example argument, e.g. 'torch.randn(4, 64)' or "
                             "'idx=torch.randint(0, 100, (2, 9))' (repeat for each argument)")
    parser.add_argument("-n", type=int, default=100, help="admitted cases per compiled entry")
    parser.add_argument("--backend", default="inductor", help="symc backend (default inductor)")
    parser.add_argument("--seed", type=int, default=0, help="seed for sizes and values")
    parser.add_argument("--max-value", type=int, default=64,
                        help="largest size tried for a symbol (default 64)")
    parser.add_argument("--json", action="store_true", help="print the report as JSON")


@subcommand("fuzz", "fuzz a function's sizes at its guards' edges: compiled vs eager")
def run_fuzz(args: argparse.Namespace) -> int:
    import json

    import torch

    import symc

    fn = load_target(args.target)
    positional, keywords = [], {}
    for text in args.example:
        match = _KEYWORD.match(text)
        value = eval(match.group(2) if match else text, {"torch": torch})  # noqa: S307 - CLI input
        if match:
            keywords[match.group(1)] = value
        else:
            positional.append(value)
    report = symc.fuzz(fn, *positional, n=args.n, seed=args.seed, backend=args.backend,
                       max_value=args.max_value, **keywords)
    print(json.dumps(report.to_json(), indent=2) if args.json else report)
    return 0 if report.ok else 1


def load_target(target: str):
    """The object named by `module:attr` or `file.py:attr` (dots in attr walk attributes)."""
    module_name, sep, attr = target.partition(":")
    if not sep or not attr:
        raise SystemExit(f"symc fuzz: expected module:function, got {target!r}")
    if module_name.endswith(".py"):
        path = pathlib.Path(module_name).resolve()
        spec = importlib.util.spec_from_file_location(path.stem, path)
        module = importlib.util.module_from_spec(spec)
        sys.modules[path.stem] = module
        spec.loader.exec_module(module)
    else:
        if "" not in sys.path and str(pathlib.Path.cwd()) not in sys.path:
            sys.path.insert(0, str(pathlib.Path.cwd()))
        module = importlib.import_module(module_name)
    obj = module
    for part in attr.split("."):
        obj = getattr(obj, part)
    return obj


run_fuzz.configure = _configure
