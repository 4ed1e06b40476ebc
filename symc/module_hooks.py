"""Whether calling a module must go through nn.Module.__call__ for its hooks.

    if has_hooks(module):       # forward (pre-)hooks, backward (pre-)hooks, or global ones
        module(*args)           # nn.Module.__call__ runs them around the (compiled) forward

Capture breaks at a call of a module with hooks and guards that the modules it inlined have
none (capture.calls.call_module), so a hook registered after the first call recompiles.
"""

from __future__ import annotations

import torch

_MODULE = torch.nn.modules.module
_OWN = ("_forward_hooks", "_forward_pre_hooks", "_backward_hooks", "_backward_pre_hooks")
_GLOBAL = ("_global_forward_hooks", "_global_forward_pre_hooks", "_global_backward_hooks",
           "_global_backward_pre_hooks")


def has_global_hooks() -> bool:
    return any(getattr(_MODULE, name, None) for name in _GLOBAL)


def has_own_hooks(module: torch.nn.Module) -> bool:
    """Hooks of the module itself: forward, pre-forward, backward, backward pre-hooks."""
    d = module.__dict__
    return any(d.get(name) for name in _OWN)


def has_hooks(module: torch.nn.Module) -> bool:
    """Hooks of the module itself, or global module hooks
    (torch.nn.modules.module.register_module_forward_hook ...)."""
    return has_own_hooks(module) or has_global_hooks()
