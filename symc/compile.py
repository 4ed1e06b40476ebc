"""symc.compile: wrap a function or an nn.Module so each call goes through the guard cache.

    step = symc.compile(model, backend="eager")     # a CompiledModule sharing model's params
    loss = step(idx, targets)                       # first call captures; later calls check guards
    @symc.compile(backend="prims")
    def f(x): ...

Under torch.distributed, compile the inner module in place and wrap it as usual (see
CompiledModule.install): `compiled = symc.compile(model).install(); ddp = DDP(model)`.
"""

from __future__ import annotations

import functools
import types

import torch

from symc.backends import get_backend
from symc.cache import CompiledFunction
from symc.module_hooks import has_hooks, has_own_hooks


def compile(fn_or_module=None, *, backend="inductor", dynamic=True, fullgraph=False):  # noqa: A001
    """Compile `fn_or_module`: a function, bound method, nn.Module (-> a CompiledModule, itself
    an nn.Module), functools.partial (its function is compiled, the bound arguments stay
    arguments) or callable object (its `__call__`); usable as a decorator."""
    get_backend(backend)  # unknown names fail here, listing the known ones
    if fn_or_module is None:
        return lambda fn: compile(fn, backend=backend, dynamic=dynamic, fullgraph=fullgraph)
    options = dict(backend=backend, dynamic=dynamic, fullgraph=fullgraph)
    target = fn_or_module
    if isinstance(target, CompiledModule | CompiledFunction):
        return target
    if isinstance(target, torch.nn.Module):
        return CompiledModule(target, **options)
    if isinstance(target, functools.partial):
        return functools.partial(compile(target.func, **options), *target.args,
                                 **target.keywords)
    if isinstance(target, types.MethodType) and isinstance(target.__func__, types.FunctionType):
        return CompiledFunction(target.__func__, self_obj=target.__self__, **options)
    if isinstance(target, types.FunctionType):
        return CompiledFunction(target, **options)
    call = getattr(type(target), "__call__", None)
    if isinstance(call, types.FunctionType):  # a callable object: its __call__, bound to it
        return CompiledFunction(call, self_obj=target, name=f"{type(target).__qualname__}"
                                f".__call__", **options)
    raise TypeError(f"symc.compile expects a function, nn.Module, functools.partial or an "
                    f"object with a Python __call__, got {type(target).__name__}")


_OWN_ATTRS = frozenset({"_orig_mod", "_compiled_forward", "_symc_options"})
_PREFIX = "_orig_mod."


class CompiledModule(torch.nn.Module):
    """An nn.Module running `module`'s forward through symc (torch.compile's OptimizedModule
    counterpart): it fits in nn.Sequential, deep-copies and pickles (the compiled caches are
    dropped and rebuilt on the next call, never copied).

    Parameters, buffers, hooks and attributes are the original module's own (it is the child
    `_orig_mod`; attribute reads and writes pass through), so an optimizer built on either
    trains both. `state_dict()` keys are the original module's (no `_orig_mod.` prefix, unlike
    torch.compile), so checkpoints move between eager and compiled models; `load_state_dict`
    takes either form, with or without the `_orig_mod.` prefix. `parameters()` are the same
    tensors, in the same order; `named_parameters()` names carry the `_orig_mod.` prefix.

    Distributed training: compile the inner model and install the compiled forward on it, then
    wrap the model itself (not this wrapper) in DDP or FSDP2:

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
        super().__init__()
        self._orig_mod = module
        object.__setattr__(self, "_symc_options", dict(options))
        self._build()
        self._register_load_state_dict_pre_hook(_accept_unprefixed_keys, with_module=True)

    def _build(self) -> None:
        module = self._orig_mod
        name = f"{type(module).__name__}.forward"
        object.__setattr__(self, "_compiled_forward", CompiledFunction(
            type(module).forward, self_obj=module, name=name, **self._symc_options))

    def __call__(self, *args, **kwargs):
        # The wrapper is no module of the user's program: global module hooks fire for the
        # original module (in forward), not a second time for the wrapper; hooks registered
        # on the wrapper itself do run, through nn.Module.__call__.
        if has_own_hooks(self):
            return super().__call__(*args, **kwargs)
        return self.forward(*args, **kwargs)

    def forward(self, *args, **kwargs):
        module = self._orig_mod
        if self.installed:
            return module(*args, **kwargs)
        if has_hooks(module):
            # Run nn.Module.__call__ (hooks included) around the compiled forward.
            module.forward = self._compiled_forward
            try:
                return module(*args, **kwargs)
            finally:
                module.__dict__.pop("forward", None)
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

    # ------------------------------------------------------------------ state_dict
    def state_dict(self, *args, destination=None, prefix="", keep_vars=False):
        """The original module's state_dict: its keys, no `_orig_mod.` prefix."""
        return self._orig_mod.state_dict(*args, destination=destination, prefix=prefix,
                                          keep_vars=keep_vars)

    # ------------------------------------------------------------------ copy and pickle
    def __getstate__(self):
        state = dict(self.__dict__)
        state.pop("_compiled_forward", None)   # graphs, kernels, generated code: rebuilt
        if self.installed:
            state["_symc_installed"] = True
        return state

    def __setstate__(self, state):
        installed = state.pop("_symc_installed", False)
        super().__setstate__(state)
        if installed:  # the copied module's forward is the old CompiledFunction: rebuild it
            self._orig_mod.__dict__.pop("forward", None)
        self._build()
        if installed:
            self.install()

    # ------------------------------------------------------------------ pass-through
    def __getattr__(self, name):
        try:
            return super().__getattr__(name)
        except AttributeError:
            if name.startswith("__") or "_modules" not in self.__dict__:
                raise
            return getattr(self._modules["_orig_mod"], name)

    def __setattr__(self, name, value):
        if name in _OWN_ATTRS or name in self.__dict__ or "_orig_mod" not in self._modules:
            super().__setattr__(name, value)
        else:
            setattr(self._orig_mod, name, value)

    def __delattr__(self, name):
        if name in _OWN_ATTRS or name in self.__dict__:
            super().__delattr__(name)
        else:
            delattr(self._orig_mod, name)

    def __dir__(self):
        return sorted(set(super().__dir__()) | set(dir(self._orig_mod)))

    def __repr__(self) -> str:
        return f"symc.compile({self._orig_mod!r})"


def _accept_unprefixed_keys(module, state_dict, prefix, *_):
    """load_state_dict pre-hook: keys without the `_orig_mod.` prefix load into the original."""
    for key in [k for k in state_dict if k.startswith(prefix)
                and not k.startswith(prefix + _PREFIX)]:
        state_dict[prefix + _PREFIX + key[len(prefix):]] = state_dict.pop(key)


def compiled_functions(obj) -> list[CompiledFunction]:
    """Every CompiledFunction behind `obj` (itself, a module's forward, compiled children), also
    through a module with an installed compiled forward and DDP/DataParallel around it."""
    if isinstance(obj, torch.nn.parallel.DistributedDataParallel | torch.nn.DataParallel):
        obj = obj.module
    if isinstance(obj, torch.nn.Module) and isinstance(obj.__dict__.get("forward"),
                                                       CompiledFunction):
        obj = obj.__dict__["forward"]
    if isinstance(obj, functools.partial) and isinstance(obj.func, CompiledFunction):
        obj = obj.func
    if isinstance(obj, CompiledModule):
        obj = obj._compiled_forward
    if isinstance(obj, CompiledFunction):
        return obj.all_functions()
    raise TypeError(f"expected something returned by symc.compile, got {type(obj).__name__}")
