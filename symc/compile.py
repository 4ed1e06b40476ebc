"""symc.compile: wrap a function or an nn.Module so each call goes through the guard cache.

    step = symc.compile(model, backend="eager")     # a CompiledModule sharing model's params
    loss = step(idx, targets)                       # first call captures; later calls check guards
    @symc.compile(backend="prims")
    def f(x): ...

Under torch.distributed, compile the inner module in place and wrap it as usual (see
CompiledModule.install): `compiled = symc.compile(model).install(); ddp = DDP(model)`.
"""

from __future__ import annotations

import types

import torch

from symc.backends import get_backend
from symc.cache import CompiledFunction


def compile(fn_or_module=None, *, backend="inductor", dynamic=True, fullgraph=False):  # noqa: A001
    """Compile `fn_or_module` (a function, bound method or nn.Module); usable as a decorator."""
    get_backend(backend)  # unknown names fail here, listing the known ones
    if fn_or_module is None:
        return lambda fn: compile(fn, backend=backend, dynamic=dynamic, fullgraph=fullgraph)
    options = dict(backend=backend, dynamic=dynamic, fullgraph=fullgraph)
    if isinstance(fn_or_module, CompiledModule | CompiledFunction):
        return fn_or_module
    if isinstance(fn_or_module, torch.nn.Module):
        return CompiledModule(fn_or_module, **options)
    if isinstance(fn_or_module, types.MethodType):
        return CompiledFunction(fn_or_module.__func__, self_obj=fn_or_module.__self__, **options)
    if isinstance(fn_or_module, types.FunctionType):
        return CompiledFunction(fn_or_module, **options)
    raise TypeError(f"symc.compile expects a function or an nn.Module, got "
                    f"{type(fn_or_module).__name__}")


def _has_hooks(module: torch.nn.Module) -> bool:
    hooks = torch.nn.modules.module
    return bool(module._forward_hooks or module._forward_pre_hooks or module._backward_hooks
                or hooks._global_forward_hooks or hooks._global_forward_pre_hooks)


class CompiledModule:
    """A module wrapper: calls go through the compiled forward; everything else is the module's.

    Parameters, buffers, `state_dict()`, `load_state_dict()`, `parameters()`, hooks and
    attributes are the original module's own (reads and writes pass through), so an optimizer
    built on either trains both.

    Distributed training: compile the inner model and install the compiled forward on it, then
    wrap the model itself (not this wrapper, which is no nn.Module) in DDP or FSDP2:

        compiled = symc.compile(model, backend="inductor").install()   # model(...) is compiled
        ddp = DistributedDataParallel(model, device_ids=[rank])          # or fully_shard(model)
        _, loss = ddp(idx, targets); loss.backward()                     # grads all-reduced
        symc.explain(compiled)      # (or explain(ddp)): 1 compile, 0 recompiles on every rank

    The whole model is one graph; DDP's forward (profiler ranges, C++ reducer calls) stays
    eager around it, and its gradient hooks fire on the parameters, which are inputs of the
    compiled backward. Each rank compiles once and reuses it for every sequence length, so
    ranks drawing different lengths never recompile. `symc.compile(ddp)` works too, but records
    a graph break at DDP.forward and compiles the inner module as its child. FSDP2: shard the
    root only (`fully_shard(model)`) for one graph; blocks sharded on their own carry hooks,
    so the model breaks at them and each block compiles on its own.
    """

    def __init__(self, module: torch.nn.Module, **options):
        forward = type(module).forward
        name = f"{type(module).__name__}.forward"
        object.__setattr__(self, "_orig_mod", module)
        object.__setattr__(self, "_compiled_forward",
                           CompiledFunction(forward, self_obj=module, name=name, **options))

    def __call__(self, *args, **kwargs):
        module = self._orig_mod
        if self.installed:
            return module(*args, **kwargs)
        if _has_hooks(module):
            # Run nn.Module.__call__ (hooks included) around the compiled forward.
            module.forward = self._compiled_forward
            try:
                return module(*args, **kwargs)
            finally:
                module.__dict__.pop("forward", None)
        return self._compiled_forward(*args, **kwargs)

    def forward(self, *args, **kwargs):
        return self._compiled_forward(*args, **kwargs)

    @property
    def installed(self) -> bool:
        return self._orig_mod.__dict__.get("forward") is self._compiled_forward

    def install(self) -> CompiledModule:
        """Make the module's own calls (`model(x)`, hooks included) run the compiled forward, so
        a wrapper that calls it (DDP, FSDP2, a parent module) runs compiled code. Returns self;
        `uninstall()` undoes it."""
        self._orig_mod.forward = self._compiled_forward
        return self

    def uninstall(self) -> CompiledModule:
        if self.installed:
            del self._orig_mod.__dict__["forward"]
        return self

    def train(self, mode: bool = True) -> CompiledModule:
        self._orig_mod.train(mode)
        return self

    def eval(self) -> CompiledModule:
        return self.train(False)

    def to(self, *args, **kwargs) -> CompiledModule:
        self._orig_mod.to(*args, **kwargs)
        return self

    def __getattr__(self, name):
        return getattr(self._orig_mod, name)

    def __setattr__(self, name, value):
        setattr(self._orig_mod, name, value)

    def __dir__(self):
        return sorted(set(dir(self._orig_mod)) | {"_orig_mod", "_compiled_forward"})

    def __repr__(self) -> str:
        return f"symc.compile({self._orig_mod!r})"


def compiled_functions(obj) -> list[CompiledFunction]:
    """Every CompiledFunction behind `obj` (itself, a module's forward, compiled children), also
    through a module with an installed compiled forward and DDP/DataParallel around it."""
    if isinstance(obj, torch.nn.parallel.DistributedDataParallel | torch.nn.DataParallel):
        obj = obj.module
    if isinstance(obj, torch.nn.Module) and isinstance(obj.__dict__.get("forward"),
                                                       CompiledFunction):
        obj = obj.__dict__["forward"]
    if isinstance(obj, CompiledModule):
        obj = obj._compiled_forward
    if isinstance(obj, CompiledFunction):
        return obj.all_functions()
    raise TypeError(f"expected something returned by symc.compile, got {type(obj).__name__}")
