"""`symc demo`: the main job. Train a small GPT on variable-length text batches with symc."""

from __future__ import annotations

import argparse

from symc.cli import subcommand


def _configure(p: argparse.ArgumentParser) -> None:
    from symc.demo import DemoOptions

    d = DemoOptions()  # CPU defaults; on a GPU, DemoOptions.for_device picks larger ones
    p.add_argument("--steps", type=int, default=None,
                   help=f"training steps (default {d.steps} on CPU, more on GPU)")
    p.add_argument("--device", default=None, help="cpu or cuda (default: cuda if available)")
    p.add_argument("--backend", default=d.backend, choices=["inductor", "aot_eager", "prims",
                   "eager", "none"], help="symc backend; 'none' trains in plain eager PyTorch")
    p.add_argument("--compare-torch", action="store_true",
                   help="also time torch.compile on the same batches")
    p.add_argument("--no-compare-eager", action="store_true", help="skip the eager timing pass")
    p.add_argument("--seqlen-min", type=int, default=None, help=f"default {d.seqlen_min} on CPU")
    p.add_argument("--seqlen-max", type=int, default=None, help=f"default {d.seqlen_max} on CPU")
    p.add_argument("--batch", type=int, default=None, help=f"default {d.batch} on CPU")
    p.add_argument("--layers", type=int, default=None, help=f"default {d.n_layer} on CPU")
    p.add_argument("--d-model", type=int, default=None, help=f"default {d.n_embd} on CPU")
    p.add_argument("--seed", type=int, default=d.seed)
    p.add_argument("--dry-run", action="store_true", help="print the plan and environment only")


@subcommand("demo", "train a small GPT on variable-length batches of shipped text (the main job)")
def _demo(args: argparse.Namespace) -> int:
    import torch
    from rich.console import Console

    from symc.demo import DemoOptions, format_report, load_text, run_demo

    device = args.device or ("cuda" if torch.cuda.is_available() else "cpu")
    opts = DemoOptions.for_device(
        device, steps=args.steps, backend=args.backend, compare_torch=args.compare_torch,
        seqlen_min=args.seqlen_min, seqlen_max=args.seqlen_max, batch=args.batch,
        n_layer=args.layers, n_embd=args.d_model, seed=args.seed,
        compare_eager=not args.no_compare_eager)
    console = Console()
    if opts.seqlen_min < 2 or opts.seqlen_max < opts.seqlen_min or opts.steps < 1:
        console.print(f"[red]need 2 <= --seqlen-min <= --seqlen-max and --steps >= 1, got "
                      f"{opts.seqlen_min}..{opts.seqlen_max}, {opts.steps} steps")
        return 2
    if args.dry_run:
        from symc.environment import describe

        console.print("[bold]symc demo plan")
        console.print(f"  train a byte-level GPT ({opts.n_layer} layers, d={opts.n_embd}, "
                      f"{opts.n_head} heads) for {opts.steps} steps, batch {opts.batch}")
        console.print(f"  sequence length drawn each step from [{opts.seqlen_min}, "
                      f"{opts.seqlen_max}], text: {len(load_text()):,} bytes shipped with symc")
        console.print(f"  compiled with symc.compile(model, backend={opts.backend!r}) on {device}")
        console.print(f"  then: eager timing pass = {opts.compare_eager}, torch.compile pass = "
                      f"{opts.compare_torch}, a text sample")
        console.print("[bold]environment")
        for key, value in describe().items():
            console.print(f"  {key:>14}: {value}")
        return 0
    report = run_demo(opts, console=console)
    console.print("[bold]symc demo report")
    print(format_report(report))
    return 0


_demo.configure = _configure
