"""Launch size-generic Triton kernels: variants compiled once, one picked per call.

A generated kernel module defines plain functions (no decorator) for each *body* (`pointwise`,
or `persistent` and `looped` for reductions). `TritonKernel(spec)` jits each body once per
*alignment level*, each with a cache key no argument value can change:
  - 0, generic: `do_not_specialize` on every int and pointer (size 1, odd pointers, anything);
  - 1, aligned pointers: pointers specialised (picked only when all are 16-byte aligned), ints
    not, so static factors (`768*s0`) still let Triton vectorise;
  - 2, aligned: also the size arguments in `spec.align_args`, picked when all are divisible by
    16 (only built when the kernel has such arguments).
Per call, `pick_config(xnumel, rnumel)` chooses a `BlockConfig` by size class (persistent
reductions need RBLOCK >= rnumel) and alignment picks the variant. With precompile on (the
default off the interpreter) every variant is compiled at the kernel's first launch through
`warmup`, so no size seen later compiles anything. `COUNTERS` counts variants, launches and the
distinct compiled binaries Triton returned (the compile count tests and benchmarks read).
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import pathlib
import sys
from collections import Counter
from collections.abc import Callable
from contextlib import contextmanager
from dataclasses import dataclass, field, replace

import weakref

import torch
import triton
from triton import knobs

from inductor.runtime.cache_dir import cache_subdir
from inductor.runtime.triton_fast_launch import make_entry, make_launch

COUNTERS: Counter = Counter()  # "variants", "launches", "compiles", "precompiles"
FAST_LAUNCH = os.environ.get("SYMC_TRITON_FAST_LAUNCH", "1") != "0"
WIDE_SUFFIX = "_i64"  # the int64-indexed twin of a body (codegen/triton_index_width.py)
PLAN_CACHE_SIZE = 4096  # distinct size tuples a kernel remembers its (config, grid) for


class _Stub:
    """Test hook (`stub_launches()`, or SYMC_TRITON_STUB_LAUNCH=1): every launch runs symc's
    whole host path, then hands its arguments to a no-op instead of a compiled binary (no
    kernel runs). bench/host_overhead.py measures our per-launch cost this way on a CPU."""

    active = os.environ.get("SYMC_TRITON_STUB_LAUNCH", "0") == "1"


STUB = _Stub()
_KERNELS: weakref.WeakSet = weakref.WeakSet()  # every TritonKernel (stub_launches() resets them)


class _NoHookChain:
    """Stands for Triton's HookChain class where a version has none (hooks are plain
    callables or None there)."""


_HOOK_CHAIN = getattr(knobs, "HookChain", _NoHookChain)


@contextmanager
def stub_launches():
    """Within: launches run no kernel (outputs keep whatever memory held); see `_Stub`."""
    before, STUB.active = STUB.active, True
    for kernel in list(_KERNELS):
        kernel.forget_entries()
    try:
        yield
    finally:
        STUB.active = before
        for kernel in list(_KERNELS):
            kernel.forget_entries()


class StubBinary:
    """What the stub launches instead of a CompiledKernel: the same attributes, no work."""

    function = 0
    packed_metadata = ()

    @staticmethod
    def run(*args) -> None:
        return None

    @staticmethod
    def launch_metadata(*args) -> None:
        return None


def reset_counters() -> None:
    COUNTERS.clear()


def is_interpreting() -> bool:
    return os.environ.get("TRITON_INTERPRET", "0") == "1"


@dataclass(frozen=True, slots=True)
class BlockConfig:
    """Block sizes of one variant; `body` names the kernel function it launches.

    A persistent config serves rnumel <= RBLOCK in one pass; a looped one serves any rnumel.
    `min_rnumel` lets a table hand large rows to a bigger block (size classes). A `tiled`
    pointwise config ([YBLOCK, XBLOCK] over rows x cols) serves the row lengths it pads by at
    most 1/8 (`pads_little`) that are multiples of `cols_multiple`.
    """

    body: str
    XBLOCK: int
    RBLOCK: int | None = None
    num_warps: int = 4
    min_rnumel: int = 0
    YBLOCK: int | None = None
    cols_multiple: int = 1

    @property
    def persistent(self) -> bool:
        return self.body == "persistent"

    @property
    def name(self) -> str:
        r = f"_r{self.RBLOCK}" if self.RBLOCK else ""
        y = f"_y{self.YBLOCK}" if self.YBLOCK else ""
        return f"{self.body}{y}_x{self.XBLOCK}{r}_w{self.num_warps}"

    def pads_little(self, cols: int) -> bool:
        """A row of `cols` elements fills its XBLOCK-wide blocks to at least 8/9."""
        return -(-cols // self.XBLOCK) * self.XBLOCK * 8 <= cols * 9

    def serves(self, rnumel: int | None, cols: int | None = None) -> bool:
        if self.YBLOCK is not None and cols is not None:
            return cols % self.cols_multiple == 0 and self.pads_little(cols)
        if rnumel is None or self.RBLOCK is None:
            return True
        if self.persistent and rnumel > self.RBLOCK:
            return False
        return rnumel >= self.min_rnumel

    def constexprs(self) -> dict[str, int]:
        """The block sizes in the kernel's parameter order (launches pass them by position)."""
        out = {"XBLOCK": self.XBLOCK}
        if self.YBLOCK is not None:
            out["YBLOCK"] = self.YBLOCK
        if self.RBLOCK is not None:
            out["RBLOCK"] = self.RBLOCK
        return out


@dataclass
class KernelSpec:
    """What codegen hands the launcher for one kernel.

    `args` is the launch order: pointer args, then int args. `xnumel(*sizes)`/`rnumel(*sizes)`
    take the values of `size_args` (a subset of the int args, in that order). `configs` is the
    variant table, ordered by preference: the first config that serves a call is used.
    """

    name: str
    source: str
    args: tuple[str, ...]
    pointer_args: tuple[str, ...]
    int_args: tuple[str, ...]
    size_args: tuple[str, ...]
    align_args: tuple[str, ...]
    xnumel: Callable[..., int]
    rnumel: Callable[..., int] | None
    configs: tuple[BlockConfig, ...]
    float_args: tuple[str, ...] = ()
    meta: dict = field(default_factory=dict)
    # the bodies index in int32; sizes -> whether int32 holds every index (else the int64
    # twins, `<body>_i64`, run); None: one index width for every size
    int32_fits: Callable[..., bool] | None = None
    # a tiled pointwise kernel's row length (its innermost merged dim): sizes -> cols; its
    # grid is cdiv(cols, XBLOCK) * cdiv(xnumel // cols, YBLOCK) programs
    cols: Callable[..., int] | None = None


def cache_dir() -> pathlib.Path:
    return cache_subdir("triton_src")


def ensure_helper_mode() -> None:
    """Re-import the helper modules if TRITON_INTERPRET changed since they were decorated.

    `triton.jit` returns an interpreted or a compiled function depending on TRITON_INTERPRET at
    decoration time, and a kernel can only call helpers of its own kind.
    """
    from inductor.runtime import triton_helpers, triton_math

    if triton_math.INTERPRETING != is_interpreting():
        importlib.reload(triton_math)
        importlib.reload(triton_helpers)
    if is_interpreting():
        _interpreter_index_compat()


def _interpreter_index_compat() -> None:
    """Triton 3.6's interpreter turns a scalar into an int with `int(array)` on a 1-element
    array, which numpy >= 2.4 refuses (`range(0, rnumel, RBLOCK)` in a looped kernel fails);
    later interpreters do not. Read the element instead. Interpreter only: tests, never GPUs."""
    from triton.runtime import interpreter

    original = getattr(interpreter, "_patch_lang_tensor", None)
    if original is None or getattr(original, "symc_compat", False):
        return

    def patch_lang_tensor(tensor, scope):
        original(tensor, scope)
        scope.set_attr(tensor, "__index__", lambda self: int(self.handle.data.reshape(-1)[0]))

    patch_lang_tensor.symc_compat = True
    interpreter._patch_lang_tensor = patch_lang_tensor


def load_module(name: str, source: str):
    """Write `source` to the cache (named by its hash) and import it; Triton needs a real file."""
    ensure_helper_mode()
    digest = hashlib.sha256(f"{is_interpreting()}{source}".encode()).hexdigest()[:16]
    mod_name = f"symc_triton_{name}_{digest}"
    if mod_name in sys.modules:
        return sys.modules[mod_name]
    path = cache_dir() / f"{mod_name}.py"
    if not path.exists() or path.read_text() != source:
        tmp = path.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_text(source)
        os.replace(tmp, path)
    module_spec = importlib.util.spec_from_file_location(mod_name, path)
    module = importlib.util.module_from_spec(module_spec)
    sys.modules[mod_name] = module
    module_spec.loader.exec_module(module)
    return module


class TritonKernel:
    """A launchable kernel: `kernel(*args)` with args in `spec.args` order (see module doc)."""

    def __init__(self, spec: KernelSpec, precompile: bool | None = None):
        self.spec = spec
        self.module = load_module(spec.name, spec.source)
        if precompile is None:
            precompile = os.environ.get("SYMC_TRITON_PRECOMPILE", "1") != "0"
        self.precompile = precompile
        self._variants: dict[tuple[str, bool], object] = {}
        self._binaries: set[int] = set()
        self._warm = False
        self._pointer_pos = [spec.args.index(a) for a in spec.pointer_args]
        self._size_pos = [spec.args.index(a) for a in spec.size_args]
        self._align_pos = [spec.args.index(a) for a in spec.align_args]
        self._picks: dict = {}  # (BlockConfig, level) -> [launches], a cell entries share
        self._fast: dict = {}
        self._stub_fast: dict = {}  # the same, launching StubBinary (stub_launches())
        self._binaries_of: dict = {}  # (config, level, pointer dtypes) -> compiled binary
        self._plans: dict = {}  # size-argument values -> (BlockConfig, grid) or None (empty)
        self.pending: list = []  # triton_precompile futures, waited for at the first launch
        self._num_pointers = len(spec.pointer_args)
        # scalar-argument values -> [entry when a pointer is misaligned, entry when all are
        # aligned]: what the generated `launch` runs (triton_fast_launch.py)
        self._launch_plans: dict = {}
        self.launch = make_launch(self, {"plans_get": self._launch_plans.get, "slow": self,
                                         "rt": knobs.runtime, "Chain": _HOOK_CHAIN,
                                         "counters": COUNTERS})
        _KERNELS.add(self)

    @property
    def source(self) -> str:
        return self.spec.source

    def levels(self) -> tuple[int, ...]:
        return (0, 1, 2) if self.spec.align_args else (0, 1)

    def variant(self, body: str, level: int):
        """The jitted function for (body, alignment level), created once."""
        key = (body, level)
        fn = self._variants.get(key)
        if fn is None:
            spec = self.spec
            fn = jit_variant(self.module, spec.name, body, level, spec.pointer_args,
                             spec.int_args, spec.align_args)
            self._variants[key] = fn
            COUNTERS["variants"] += 1
        return fn

    def all_variants(self) -> list[tuple[BlockConfig, int]]:
        return [(cfg, level) for cfg in self.spec.configs for level in self.levels()]

    def pick_config(self, xnumel: int, rnumel: int | None, cols: int | None = None
                    ) -> BlockConfig:
        for cfg in self.spec.configs:
            if cfg.serves(rnumel, cols):
                return cfg
        if cols is not None:  # rows that no tile fills well: the narrowest pads the least
            return self.spec.configs[-1]
        raise RuntimeError(f"kernel {self.spec.name}: no block config serves rnumel={rnumel}")

    def _plan(self, sizes: tuple):
        """(config, grid) for these size-argument values, or None when xnumel is 0; sizes
        repeat across launches (every kernel of a step sees the same few), so this is cached."""
        xnumel = self.spec.xnumel(*sizes)
        rnumel = self.spec.rnumel(*sizes) if self.spec.rnumel is not None else None
        if xnumel <= 0:
            return None
        cols = self.spec.cols(*sizes) if self.spec.cols is not None else None
        cfg = self.pick_config(xnumel, rnumel, cols)
        if self.spec.int32_fits is not None and not self.spec.int32_fits(*sizes):
            # indices past int32 (2**31 elements): the int64 twin, compiled at its first use
            cfg = replace(cfg, body=cfg.body + WIDE_SUFFIX)
            COUNTERS["int64_launch_plans"] += 1
        if cfg.YBLOCK is not None:  # one program per [YBLOCK, XBLOCK] tile, row-major
            rows = xnumel // cols
            return cfg, -(-cols // cfg.XBLOCK) * -(-rows // cfg.YBLOCK)
        return cfg, (xnumel + cfg.XBLOCK - 1) // cfg.XBLOCK

    def alignment_level(self, args) -> int:
        for pos in self._pointer_pos:
            if args[pos].data_ptr() % 16:
                return 0
        if self._align_pos and all(args[pos] % 16 == 0 for pos in self._align_pos):
            return 2
        return 1

    def _warmup(self, args) -> None:
        """Compile every variant now (first launch), with mock arguments of fixed keys.

        Variants already compiled by triton_precompile's workers load from Triton's disk cache.
        """
        self._warm = True
        if not self.precompile:
            return
        if self.pending:
            COUNTERS["pool_failures"] += wait_for_jobs(self.pending)
            COUNTERS["pool_compiles"] += len(self.pending)
            self.pending = []
        values = [a.dtype if isinstance(a, torch.Tensor) else a for a in args]
        for cfg, level in self.all_variants():
            fn = self.variant(cfg.body, level)
            if is_interpreting():
                continue
            mock = mock_arguments(self.spec.args, values, level, self.spec.align_args)
            binary = fn.warmup(*mock, grid=(1,), num_warps=cfg.num_warps, **cfg.constexprs())
            self._count_binary(binary)
            COUNTERS["precompiles"] += 1

    def _count_binary(self, binary) -> None:
        if binary is not None and id(binary) not in self._binaries:
            self._binaries.add(id(binary))
            COUNTERS["compiles"] += 1

    def __call__(self, *args) -> None:
        """The general launch path (the wrapper calls `self.launch`, which comes here for what
        it has no entry for): plan, pick the variant, launch, and add the entry."""
        if not self._warm:
            self._warmup(args)
        sizes = tuple([args[p] for p in self._size_pos])
        plan = self._plans.get(sizes, False)
        if plan is False:
            if len(self._plans) >= PLAN_CACHE_SIZE:
                self._plans.clear()
            plan = self._plans[sizes] = self._plan(sizes)
        if plan is None:
            return  # nothing to compute at these sizes
        cfg, grid0 = plan
        level = self.alignment_level(args)
        cell = self._pick_cell(cfg, level)
        cell[0] += 1
        COUNTERS["launches"] += 1
        # Pointer dtypes are part of the key: the binary Triton built is specialised on them.
        fast_key = (cfg, level, *[args[p].dtype for p in self._pointer_pos])
        fasts = self._stub_fast if STUB.active else self._fast
        fast = fasts.get(fast_key)
        if fast is not None:
            fast(grid0, args)
            binary = StubBinary if STUB.active else self._binaries_of[fast_key]
        elif STUB.active:
            binary = StubBinary
            fasts[fast_key] = _fast_launcher(binary, cfg)
        else:
            fn = self.variant(cfg.body, level)
            binary = fn[(grid0,)](*args, num_warps=cfg.num_warps, **cfg.constexprs())
            if hasattr(binary, "result"):
                binary = binary.result()
            self._count_binary(binary)
            if binary is None or not FAST_LAUNCH:
                return  # the interpreter: no binary to launch directly
            fasts[fast_key] = _fast_launcher(binary, cfg)
            self._binaries_of[fast_key] = binary
        self._add_entry(args, binary, cfg, grid0, level, cell)

    def _pick_cell(self, cfg: BlockConfig, level: int) -> list:
        cell = self._picks.get((cfg, level))
        if cell is None:
            cell = self._picks[(cfg, level)] = [0]
        return cell

    def _add_entry(self, args, binary, cfg: BlockConfig, grid0: int, level: int,
                   cell: list) -> None:
        """Let `launch` call `binary` directly for these scalar values and alignment. The
        pointer dtypes are not rechecked there: a kernel's are fixed by its graph's buffers."""
        if len(self._launch_plans) >= PLAN_CACHE_SIZE:
            self._launch_plans.clear()
        key = args[self._num_pointers:]
        slots = self._launch_plans.setdefault(key, [None, None])
        slots[level > 0] = make_entry(binary, grid0, tuple(cfg.constexprs().values()), cell,
                                      _stream_source(binary), self.spec.args)

    def forget_entries(self) -> None:
        """Drop every direct-launch entry (stub_launches() switching launchers)."""
        self._launch_plans.clear()

    @property
    def picks(self) -> Counter:
        """Launches per (config name, alignment level)."""
        return Counter({(cfg.name, level): n for (cfg, level), (n,) in self._picks.items()})

    @property
    def launches(self) -> int:
        return sum(n for (n,) in self._picks.values())

    @property
    def compiled_binaries(self) -> int:
        return len(self._binaries)


def wait_for_jobs(futures: list) -> int:
    """Wait for triton_precompile's `futures`; returns how many failed (their variants compile
    in process)."""
    failed = 0
    for future in futures:
        try:
            future.result()
        except Exception:  # noqa: BLE001 - the in-process warmup compiles it instead
            failed += 1
    return failed


def _stream_source(binary) -> tuple:
    """(the current-stream query, the device `binary` was loaded on)."""
    if not torch.cuda.is_available():  # a stub or a test's fake binary
        return id, 0  # a C call standing in for the stream query
    return torch._C._cuda_getCurrentRawStream, torch.cuda.current_device()


def _fast_launcher(binary, cfg: BlockConfig):
    """Launch an already-compiled binary, skipping Triton's per-call argument binding (the
    general path's launch; `launch` uses triton_fast_launch's entries instead).

    Only used for a (config, alignment level, pointer dtypes) whose binary the normal path
    returned once, so the specialisation is the one Triton itself chose for these arguments.
    The call below is JITFunction.run's own launch sequence (same in Triton 3.6 and 3.9).
    """
    constexprs = tuple(cfg.constexprs().values())
    run, function, packed = binary.run, binary.function, binary.packed_metadata
    launch_metadata = binary.launch_metadata
    hooks = knobs.runtime
    raw_stream, device = _stream_source(binary)

    def launch(grid0: int, args) -> None:
        stream = raw_stream(device)
        enter = hooks.launch_enter_hook
        # launch_metadata is only read by an enter hook (it returns None without one)
        meta = None if enter is None else launch_metadata((grid0, 1, 1), stream, *args,
                                                          *constexprs)
        run(grid0, 1, 1, stream, function, packed, meta, enter, hooks.launch_exit_hook, *args,
            *constexprs)
    return launch


def jit_variant(module, name: str, body: str, level: int, pointer_args, int_args, align_args):
    """triton.jit of one kernel body at one alignment level (see the module docstring)."""
    raw = getattr(module, body_function_name(name, body))
    align = set(align_args) if level == 2 else set()
    no_spec = [a for a in int_args if a not in align]
    if level == 0:
        no_spec += list(pointer_args)
    return triton.jit(raw, do_not_specialize=no_spec,
                      do_not_specialize_on_alignment=list(no_spec))


def mock_arguments(arg_names, values, level: int, align_args) -> list:
    """warmup's arguments: a dtype per pointer, floats as given, ints whose only property that
    matters (divisibility by 16) is the one `level` assumes."""
    mock = []
    for name, value in zip(arg_names, values):
        if isinstance(value, torch.dtype | float):
            mock.append(value)
        else:
            mock.append(16 if (level == 2 and name in align_args) else 17)
    return mock


def body_function_name(kernel_name: str, body: str) -> str:
    return f"{kernel_name}_{body}"


def compile_ahead(spec: KernelSpec, body: str, level: int, arch: int = 90, dtypes=None):
    """Compile one variant for a CUDA target without a GPU (tests, tools): returns asm dict.

    `dtypes` maps pointer args to torch dtypes (default float32). Needs TRITON_INTERPRET unset.
    """
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource

    from inductor.codegen.triton_printer import SIGNATURE_TYPES

    module = load_module(spec.name, spec.source)
    raw = getattr(module, body_function_name(spec.name, body))
    fn = triton.jit(raw)
    int_type = "i64" if spec.meta.get("index_dtype") == "tl.int64" else "i32"
    signature, attrs = {}, {}
    for i, name in enumerate(spec.args):
        if name in spec.pointer_args:
            dtype = (dtypes or {}).get(name, torch.float32)
            signature[name] = "*" + SIGNATURE_TYPES[dtype]
            if level >= 1:
                attrs[(i,)] = [["tt.divisibility", 16]]
        else:
            signature[name] = int_type
            if level == 2 and name in spec.align_args:
                attrs[(i,)] = [["tt.divisibility", 16]]
    cfg = next(c for c in spec.configs if c.body == body)
    constexprs = cfg.constexprs()
    for key in constexprs:
        signature[key] = "constexpr"
    src = ASTSource(fn, signature, constexprs, attrs)
    compiled = triton.compile(src, target=GPUTarget("cuda", arch, 32),
                              options={"num_warps": cfg.num_warps})
    return compiled.asm
