"""The `symc` command line: demo, env, ops, explain, fuzz, bench, cache."""

from __future__ import annotations

import argparse
import sys

from symc.version import __version__

SUBCOMMANDS: dict[str, tuple[str, callable]] = {}


def subcommand(name: str, help_text: str):
    def register(fn):
        SUBCOMMANDS[name] = (help_text, fn)
        return fn

    return register


@subcommand("env", "show what symc found on this machine (torch, triton, z3, GPU, compiler)")
def _env(args: argparse.Namespace) -> int:
    from symc.environment import describe

    for key, value in describe().items():
        print(f"{key:>14}: {value}")
    return 0


def _load_subcommands() -> None:
    """Import every `symc/cmd_*.py`; each registers itself with `@subcommand`."""
    import importlib
    import pathlib

    for path in sorted(pathlib.Path(__file__).parent.glob("cmd_*.py")):
        importlib.import_module(f"symc.{path.stem}")


def build_parser() -> argparse.ArgumentParser:
    _load_subcommands()
    parser = argparse.ArgumentParser(prog="symc", description="dynamic-shape-first PyTorch compiler")
    parser.add_argument("--version", action="version", version=f"symc {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name, (help_text, fn) in SUBCOMMANDS.items():
        p = sub.add_parser(name, help=help_text)
        configure = getattr(fn, "configure", None)
        if configure:
            configure(p)
        p.set_defaults(run=fn)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "run", None):
        parser.print_help()
        return 0
    return args.run(args) or 0


if __name__ == "__main__":
    sys.exit(main())
