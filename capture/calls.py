"""Calls and attribute reads: what `f(...)` and `obj.name` mean for each kind of Variable.

    torch.relu(x) / F.gelu(x) / x.view(...)   -> graph nodes
    self.block(x)                             -> inline type(block).forward with self bound
    helper(x, k=2)                            -> inline helper's code in a nested Frame
    len(...), isinstance(...), range(...)     -> capture.builtins rules
    Config(...) of a dataclass                -> a NewObjectVariable, rebuilt after the graph

Attribute reads on inputs record guards (via `capture.builder.wrap`); parameters and buffers
become graph inputs with static sizes.
"""

from __future__ import annotations

import collections.abc
import dataclasses
import inspect
import sys
import types

import torch

from capture import contexts, objects, rng_state  # noqa: F401 (register their rules)
from capture.builder import wrap
from capture.builtins import BUILTIN_RULES
from capture.errors import MissingKey, Unsupported
from capture.inline import LazyDefault, bind
from capture.process_group import is_rank_query, rank_query
from capture.state_calls import is_state_call, state_call
from capture.sources import CellSource, ModuleGlobalSource, TypeOfSource
from capture.symfloat import tensor_literal
from capture.torch_ops import call_torch, tensor_attribute, tensor_method
from capture.variables import (
    BoundMethodVariable,
    CellVariable,
    ConstVariable,
    DictVariable,
    GeneratorVariable,
    ListVariable,
    NewObjectVariable,
    ObjectVariable,
    SizeVariable,
    SuperVariable,
    SymIntVariable,
    TensorMethodVariable,
    TensorVariable,
    StructSeqVariable,
    TupleVariable,
    UserFunctionVariable,
    UserObjectVariable,
    Variable,
    sym_value,
)
from guards import LengthGuard
from prims import field_names
from symbolic import AttrSource, ItemSource

# torch functions that answer a question about the global state, not a graph op.
TORCH_CONSTANTS = {
    torch.jit.is_scripting: False,
    torch.jit.is_tracing: False,
    torch.is_autocast_enabled: False,
    torch._C._get_tracing_state: None,
    torch.compiler.is_compiling: True,
    torch.get_default_dtype: None,  # filled at call time
}
for _name in ("has_torch_function", "has_torch_function_unary", "has_torch_function_variadic"):
    TORCH_CONSTANTS[getattr(torch.overrides, _name)] = False
    TORCH_CONSTANTS[getattr(torch._C, f"_{_name}")] = False

# The code of torch._disable_dynamo's wrapper (capture reads the function it wraps).
_DYNAMO_DISABLED = torch._disable_dynamo(lambda: None).__code__

# Constructors of plain values computed from constant arguments.
PURE_TORCH = (torch.finfo, torch.iinfo, torch.device, torch.Size)


def _defined_in_torch(fn) -> bool:
    module = getattr(fn, "__module__", None) or ""
    if module.startswith("torch"):
        return True
    owner = getattr(fn, "__self__", None)
    return isinstance(owner, types.ModuleType) and owner.__name__.startswith("torch")


def _has_decomposition(fn) -> bool:
    try:
        from prims.decompositions.registry import has_decomposition
    except ImportError:
        return _defined_in_torch(fn)
    return has_decomposition(fn)


def is_graph_op(fn) -> bool:
    """A torch callable that becomes a graph node (its meta comes from prims)."""
    try:
        import prims

        table = getattr(prims, "DECOMPOSITIONS", None)
        if table is not None and fn in table:
            return True
    except TypeError:
        return False
    if isinstance(fn, type):
        return False
    return _defined_in_torch(fn) or fn in vars(torch.Tensor).values()


# ---------------------------------------------------------------------- attributes
def load_attr(tx, obj: Variable, name: str) -> Variable:
    state = tx.state
    if isinstance(obj, TensorVariable):
        return tensor_attribute(state, obj, name)
    if isinstance(obj, UserObjectVariable):
        return objects.load_object_attr(tx, obj, name, _class_attribute)
    if isinstance(obj, NewObjectVariable):
        if name in obj.fields:
            return obj.fields[name]
        if issubclass(obj.cls, dict) and name in ("to_tuple", "keys", "values"):
            return BoundMethodVariable(ConstVariable(name), obj)
        return _class_attribute(tx, obj, obj.cls, name)
    if isinstance(obj, StructSeqVariable) and name in field_names(obj.tuple_type):
        return obj.items[field_names(obj.tuple_type).index(name)]
    if isinstance(obj, (TupleVariable, ListVariable, DictVariable)):
        return BoundMethodVariable(ConstVariable(name), obj)
    if isinstance(obj, ObjectVariable):
        written = state.attr_writes.load(obj.value, name)
        if written is not None:
            return written
    if isinstance(obj, (ConstVariable, ObjectVariable)):
        value = obj.value
        if isinstance(value, types.ModuleType):
            try:
                return wrap(state, getattr(value, name), _module_source(value, name))
            except AttributeError:
                raise Unsupported(f"module {value.__name__} has no attribute {name!r}") from None
        source = AttrSource(obj.source, name) if obj.source is not None else None
        if isinstance(value, torch.nn.Module):
            return _module_attribute(tx, obj, value, name, source)
        if isinstance(obj, ConstVariable) or isinstance(value, type):
            try:
                attr = getattr(value, name)
            except AttributeError:
                raise Unsupported(f"{type(value).__name__} has no attribute {name!r}") from None
            if isinstance(obj, ConstVariable) and callable(attr):
                return ObjectVariable(attr)  # a method of an immutable constant
            if isinstance(value, inspect.Signature | inspect.Parameter):
                return ConstVariable(attr)  # immutable, so are its parts
            return wrap(state, attr, source)
        return _object_attribute(tx, obj, value, name, source)
    if isinstance(obj, SuperVariable):
        return _super_attribute(tx, obj, name)
    if isinstance(obj, SymIntVariable):
        raise Unsupported(f"attribute {name!r} of a symbolic int")
    raise Unsupported(f"attribute {name!r} of {type(obj).__name__}")


def _module_source(module: types.ModuleType, name: str):
    """Where `module.name` is read again for guards; torch's own attributes are taken as fixed."""
    qualified = module.__name__
    if qualified.partition(".")[0] == "torch" or sys.modules.get(qualified) is not module:
        return None
    return ModuleGlobalSource(qualified, name)


def make_super(frame, args) -> SuperVariable:
    """`super()` (zero-argument form) or `super(cls, self)` in the frame being interpreted."""
    if len(args) == 2:
        cls, self_var = args
    elif not args and frame is not None and "__class__" in frame.cells:
        cls = frame.cells["__class__"].contents
        first = frame.code.co_varnames[0] if frame.code.co_argcount else None
        self_var = frame.locals.get(first) if first else None
        if self_var is None and first in frame.cells:
            self_var = frame.cells[first].contents
    else:
        raise Unsupported("super() outside a method")
    if not isinstance(cls, (ObjectVariable, ConstVariable)) or not isinstance(cls.value, type) \
            or self_var is None:
        raise Unsupported("super() with unknown class or instance")
    return SuperVariable(cls.value, self_var)


def _super_attribute(tx, sup: SuperVariable, name: str) -> Variable:
    self_var = sup.self_var
    owner = self_var.cls if isinstance(self_var, (NewObjectVariable, UserObjectVariable)) \
        else type(
        getattr(self_var, "value", None))
    mro = owner.__mro__
    if sup.cls not in mro:
        raise Unsupported("super(): the instance is not an instance of the class")
    for klass in mro[mro.index(sup.cls) + 1:]:
        if name in vars(klass):
            found = vars(klass)[name]
            if isinstance(found, types.FunctionType):
                return BoundMethodVariable(ObjectVariable(found), self_var)
            return _class_attribute(tx, self_var, klass, name)
    raise Unsupported(f"super() has no attribute {name!r}")


def _class_attribute(tx, obj: Variable, cls: type, name: str):
    try:
        static = inspect.getattr_static(cls, name)
    except AttributeError:
        raise Unsupported(f"{cls.__name__} has no attribute {name!r}") from None
    cls_source = class_source(obj, cls)
    source = AttrSource(cls_source, name) if cls_source is not None else None
    if isinstance(static, types.FunctionType | types.MethodDescriptorType
                  | types.WrapperDescriptorType):
        return BoundMethodVariable(ObjectVariable(static, source), obj)
    if isinstance(static, property) and isinstance(static.fget, types.FunctionType):
        return call(tx, ObjectVariable(static.fget), [obj], {}, None)
    if isinstance(static, staticmethod):
        return ObjectVariable(static.__func__, source)
    if isinstance(static, classmethod):
        func_source = AttrSource(source, "__func__") if source is not None else None
        return BoundMethodVariable(ObjectVariable(static.__func__, func_source),
                                   ObjectVariable(cls, cls_source))
    return wrap(tx.state, static, source)


def class_source(obj: Variable, cls: type):
    """Where `cls` (`obj` itself, its class, or a base in that class's MRO) is read at run
    time, so class attributes read through it are guarded; None for objects with no source."""
    if isinstance(obj, (NewObjectVariable, UserObjectVariable)):
        source = obj.cls_source
        mro = obj.cls.__mro__
        if source is None or cls not in mro:
            return None
        return source if cls is mro[0] else ItemSource(AttrSource(source, "__mro__"),
                                                       mro.index(cls))
    source = getattr(obj, "source", None)
    if source is None:
        return None
    value = getattr(obj, "value", None)
    if isinstance(obj, ObjectVariable) and value is cls:
        return source
    mro = type(value).__mro__
    if mro[0] is cls:
        return TypeOfSource(source)
    if cls in mro:
        return ItemSource(AttrSource(TypeOfSource(source), "__mro__"), mro.index(cls))
    return None


def _module_attribute(tx, obj, module, name, source):
    state = tx.state
    if name in module._parameters:
        param = module._parameters[name]
        return ConstVariable(None) if param is None else wrap(state, param, source)
    if name in module._buffers:
        buf = module._buffers[name]
        return ConstVariable(None) if buf is None else wrap(state, buf, source)
    if name in module._modules:
        return wrap(state, module._modules[name], source)
    return _object_attribute(tx, obj, module, name, source)


def _object_attribute(tx, obj, value, name, source):
    instance_dict = getattr(value, "__dict__", {})
    if name in instance_dict:
        return wrap(tx.state, instance_dict[name], source)
    try:
        static = inspect.getattr_static(type(value), name)
    except AttributeError:
        try:
            attr = getattr(value, name)  # __getattr__ of the object's class
        except AttributeError:
            raise Unsupported(f"{type(value).__name__} has no attribute {name!r}") from None
        return wrap(tx.state, attr, source)
    if isinstance(static, (types.FunctionType, property, staticmethod, classmethod)):
        return _class_attribute(tx, obj, type(value), name)
    if hasattr(static, "__get__") and not isinstance(static, (int, float, str, bool)):
        return wrap(tx.state, getattr(value, name), source)
    return wrap(tx.state, static, source)


# ---------------------------------------------------------------------- calls
def call(tx, fn: Variable, args: list, kwargs: dict, frame) -> Variable:
    state = tx.state
    if isinstance(fn, TensorMethodVariable):
        return tensor_method(state, fn.name, fn.tensor, args, kwargs)
    if isinstance(fn, BoundMethodVariable):
        if isinstance(fn.fn, ConstVariable):
            return container_method(tx, fn.self_var, fn.fn.value, args, kwargs)
        return call(tx, fn.fn, [fn.self_var, *args], kwargs, frame)
    if isinstance(fn, UserFunctionVariable):
        return inline(tx, fn.code, fn.globals, fn.name, args, kwargs, fn.defaults,
                      fn.kwdefaults, dict(zip(fn.code.co_freevars, fn.closure)), frame)
    if isinstance(fn, UserObjectVariable):
        return call(tx, objects.bound_call(fn), args, kwargs, frame)
    if not isinstance(fn, (ObjectVariable, ConstVariable)):
        raise Unsupported(f"calling a {type(fn).__name__}")
    value = fn.value
    if getattr(value, "__code__", None) is _DYNAMO_DISABLED:  # torch.manual_seed once dynamo
        value = value.__wrapped__                            # is imported: the function itself
    if value in TORCH_CONSTANTS if _hashable(value) else False:
        if value is torch.get_default_dtype:
            return ConstVariable(torch.get_default_dtype())
        return ConstVariable(TORCH_CONSTANTS[value])
    if value is super:
        return make_super(frame, args)
    if value in MAPPING_LOOKUPS if _hashable(value) else False:
        return mapping_lookup(tx, value, args, kwargs, frame)
    if value is torch.is_grad_enabled:
        return ConstVariable(state.grad_enabled)
    if is_rank_query(value) and not args and not kwargs:
        return rank_query(state, value)
    tracked = objects.object_builtin(tx, value, args, kwargs, frame)
    if tracked is not None:
        return tracked
    if _hashable(value) and value in BUILTIN_RULES:
        return BUILTIN_RULES[value](tx, args, kwargs)
    if isinstance(value, torch.nn.Module):
        return call_module(tx, fn, args, kwargs, frame)
    if value is torch.nn.Module.__call__ and args and isinstance(args[0], ObjectVariable) \
            and isinstance(args[0].value, torch.nn.Module):
        return module_forward(tx, args[0], args[1:], kwargs, frame)
    if isinstance(value, types.MethodType):
        self_source = AttrSource(fn.source, "__self__") if fn.source is not None else None
        func_source = AttrSource(fn.source, "__func__") if fn.source is not None else None
        self_var = wrap(state, value.__self__, self_source)
        return call(tx, ObjectVariable(value.__func__, func_source), [self_var, *args], kwargs,
                    frame)
    if isinstance(value, type):
        return construct(tx, value, args, kwargs, fn.source, frame)
    if isinstance(fn, ObjectVariable) and fn.source is None and _pure_method(value):
        return _const_call(value, args, kwargs)
    if is_state_call(value):
        result = state_call(tx, value, args, kwargs)
        if result is not None:
            return result
    if isinstance(value, types.FunctionType) and not _has_decomposition(value):
        cells = {}
        for i, (name, cell) in enumerate(zip(value.__code__.co_freevars,
                                             value.__closure__ or ())):
            src = CellSource(fn.source, i) if fn.source is not None else None
            try:
                contents = wrap(state, cell.cell_contents, src)
            except ValueError:
                contents = None
            cells[name] = CellVariable(contents)
            cells[name].external = True
        defaults, kwdefaults = function_defaults(state, value, fn.source)
        return inline(tx, value.__code__, value.__globals__, value.__qualname__, args, kwargs,
                      defaults, kwdefaults, cells, frame)
    if is_graph_op(value):
        if value in (torch.set_grad_enabled, torch.autocast, torch.inference_mode):
            raise Unsupported(f"{value.__name__} (grad-mode/autocast changes are graph breaks)")
        if value in (torch.tensor, torch.as_tensor):
            literal = tensor_literal(state, args, kwargs)
            if literal is not None:
                return literal
        return call_torch(state, value, args, kwargs)
    raise Unsupported(f"call to {getattr(value, '__qualname__', type(value).__name__)}")


def function_defaults(state, fn: types.FunctionType, source) -> tuple[tuple, dict]:
    """`fn`'s defaults as read now, each guarded at `fn.__defaults__[i]` if the call uses it
    (a later `fn.__defaults__ = ...` then recompiles instead of reusing the old value)."""
    def lazy(value, item_source):
        return LazyDefault(lambda: wrap(state, value, item_source))

    pos = AttrSource(source, "__defaults__") if source is not None else None
    kw = AttrSource(source, "__kwdefaults__") if source is not None else None
    defaults = tuple(lazy(d, pos and ItemSource(pos, i))
                     for i, d in enumerate(fn.__defaults__ or ()))
    kwdefaults = {k: lazy(d, kw and ItemSource(kw, k))
                  for k, d in (fn.__kwdefaults__ or {}).items()}
    return defaults, kwdefaults


# Lookups with a default: Python answers them by catching the KeyError of `self[key]`.
MAPPING_LOOKUPS = (collections.abc.Mapping.get, collections.abc.Mapping.__contains__,
                   dict.get, dict.__contains__, dict.__getitem__)


def mapping_lookup(tx, method, args, kwargs, frame) -> Variable:
    """`m.get(key, default)`, `key in m`, `m[key]` for a mapping the program did not build."""
    from capture.operators import contains, subscript

    if kwargs or len(args) not in (2, 3):
        raise Unsupported(f"{method.__qualname__}() with these arguments")
    obj, key = args[0], args[1]
    default = args[2] if len(args) > 2 else ConstVariable(None)
    if isinstance(obj, DictVariable) and method is not dict.__getitem__:
        if method in (dict.get, collections.abc.Mapping.get):
            return container_method(tx, obj, "get", [key, default], {})
        return ConstVariable(contains(tx.state, key, obj))
    try:
        getitem = python_dunder(obj, "__getitem__")
        if getitem is not None:
            found = call(tx, BoundMethodVariable(ObjectVariable(getitem), obj), [key], {}, frame)
        else:
            found = subscript(tx.state, obj, key)
    except MissingKey:
        if method is dict.__getitem__:
            raise
        return ConstVariable(False) if method.__name__ == "__contains__" else default
    return ConstVariable(True) if method.__name__ == "__contains__" else found


def python_dunder(var: Variable, name: str):
    """`type(obj).<name>` when it is a Python function to inline (modules and classes aside)."""
    from capture.operators import is_state_dict

    if isinstance(var, UserObjectVariable):
        return objects.dunder(var, name)

    if not isinstance(var, ObjectVariable) or isinstance(var.value, type | torch.nn.Module) \
            or is_state_dict(var):
        return None
    method = inspect.getattr_static(type(var.value), name, None)
    return method if isinstance(method, types.FunctionType) else None


def _hashable(value) -> bool:
    try:
        hash(value)
    except TypeError:
        return False
    return True


def _pure_method(value) -> bool:
    owner = getattr(value, "__self__", None)
    return isinstance(value, types.BuiltinMethodType) and isinstance(
        owner, (str, int, float, tuple, bytes, torch.dtype, frozenset)
    )


def _const_call(value, args, kwargs) -> Variable:
    if not all(isinstance(a, ConstVariable) for a in [*args, *kwargs.values()]):
        raise Unsupported(f"{value.__qualname__} with non-constant arguments")
    result = value(*[a.value for a in args], **{k: v.value for k, v in kwargs.items()})
    return ConstVariable(result)


def inline(tx, code, f_globals, name, args, kwargs, defaults, kwdefaults, cells, frame):
    bound = bind(code, name, args, kwargs, defaults, kwdefaults)
    depth = frame.depth + 1 if frame is not None else 1
    child = tx.new_frame(code, f_globals, bound, dict(cells), depth, frame)
    if code.co_flags & inspect.CO_GENERATOR:
        return GeneratorVariable([], frame=child)  # its body runs as the consumer asks
    return child.run()


# A module call inlined skips nn.Module.__call__: it is captured only without hooks, and guarded
# so (its own hook dicts and the global ones stay empty), so a hook added later recompiles.
_MODULE_HOOKS = ("_forward_hooks", "_forward_pre_hooks", "_backward_hooks", "_backward_pre_hooks")
_GLOBAL_HOOKS = ("_global_forward_hooks", "_global_forward_pre_hooks", "_global_backward_hooks",
                 "_global_backward_pre_hooks")


def _guard_no_hooks(state, module, source) -> None:
    own = [name for name in _MODULE_HOOKS if module.__dict__.get(name)]
    found = [name for name in _GLOBAL_HOOKS if getattr(torch.nn.modules.module, name, None)]
    if own or found:
        raise Unsupported(f"module {type(module).__name__} has hooks ({', '.join(own + found)})")
    for name in _MODULE_HOOKS:
        if source is not None and name in module.__dict__:
            state.guard(LengthGuard, AttrSource(source, name), 0)
    for name in _GLOBAL_HOOKS:
        state.guard(LengthGuard, ModuleGlobalSource("torch.nn.modules.module", name), 0)


def call_module(tx, fn: ObjectVariable, args, kwargs, frame) -> Variable:
    module = fn.value
    if type(module).__call__ is not torch.nn.Module.__call__:
        # Hooks run only if the override reaches nn.Module.__call__ (module_forward guards them).
        return call(tx, ObjectVariable(type(module).__call__), [fn, *args], kwargs, frame)
    return module_forward(tx, fn, args, kwargs, frame)


def module_forward(tx, fn: ObjectVariable, args, kwargs, frame) -> Variable:
    """`nn.Module.__call__(module, ...)`: its forward, inlined, when no hook would run. Also the
    target of `super().__call__(...)` in a module that overrides `__call__` (Hugging Face's
    GradientCheckpointingLayer), whose body torch writes with checks capture cannot follow."""
    module = fn.value
    _guard_no_hooks(tx.state, module, fn.source)
    forward = inspect.getattr_static(module, "forward")
    if not isinstance(forward, types.FunctionType):
        raise Unsupported(f"{type(module).__name__}.forward is not a plain function")
    return call(tx, ObjectVariable(forward), [fn, *args], kwargs, frame)


def construct(tx, cls: type, args, kwargs, cls_source=None, frame=None) -> Variable:
    if cls in PURE_TORCH or cls in (slice, torch.Size):
        if cls is torch.Size:
            return SizeVariable(list(args[0].items) if args else [])
        return _const_call(cls, args, kwargs)
    # Plain dataclasses, and ModelOutput-style ones (dict subclasses whose __post_init__ only
    # mirrors the fields into the dict).
    if dataclasses.is_dataclass(cls) and (not hasattr(cls, "__post_init__")
                                          or issubclass(cls, dict)):
        names = [f.name for f in dataclasses.fields(cls) if f.init]
        fields = dict(zip(names, args))
        fields.update(kwargs)
        for f in dataclasses.fields(cls):
            if f.name not in fields and f.default is not dataclasses.MISSING:
                fields[f.name] = wrap(tx.state, f.default, None)
        return NewObjectVariable(cls, fields, cls_source)
    if issubclass(cls, tuple) and hasattr(cls, "_fields"):
        fields = dict(zip(cls._fields, args))
        fields.update(kwargs)
        for key, default in getattr(cls, "_field_defaults", {}).items():
            fields.setdefault(key, wrap(tx.state, default, None))
        return NewObjectVariable(cls, fields, cls_source)
    if issubclass(cls, torch.nn.Module):
        return _construct_module(cls, args, kwargs)
    if issubclass(cls, BaseException) and cls.__module__ == "builtins" and all(
            isinstance(a, ConstVariable) for a in [*args, *kwargs.values()]):
        # A builtin exception of constants: built now, so a `raise` of it breaks only there.
        return ObjectVariable(cls(*[a.value for a in args],
                                  **{k: v.value for k, v in kwargs.items()}))
    if issubclass(cls, BaseException):
        raise Unsupported(f"raise of {cls.__qualname__} (exceptions are graph breaks)")
    return objects.construct_object(tx, cls, args, kwargs, cls_source, frame)


def _construct_module(cls: type, args, kwargs) -> Variable:
    """`nn.CrossEntropyLoss()` in a forward: built now from constants; one without parameters
    or buffers is a fixed function of its constructor arguments, so no guard is needed."""
    if not all(isinstance(a, ConstVariable) for a in [*args, *kwargs.values()]):
        raise Unsupported(f"constructing a {cls.__qualname__} module from non-constant arguments")
    module = cls(*[a.value for a in args], **{k: v.value for k, v in kwargs.items()})
    if any(True for _ in module.parameters()) or any(True for _ in module.buffers()):
        raise Unsupported(f"constructing a {cls.__qualname__} module with parameters or buffers")
    return ObjectVariable(module)


def container_method(tx, obj: Variable, name: str, args, kwargs) -> Variable:
    """Methods of tuples, lists and dicts; mutating an input's container is a side effect."""
    from capture.operators import iterate

    mutating = name in ("append", "extend", "insert", "pop", "clear", "update", "setdefault",
                        "remove", "__setitem__")
    if mutating and obj.source is not None:
        raise Unsupported(f"{name}() on a container the caller passed in (a side effect)")
    if isinstance(obj, ListVariable):
        if name == "append":
            obj.items.append(args[0])
            return ConstVariable(None)
        if name == "extend":
            obj.items.extend(iterate(tx.state, args[0]))
            return ConstVariable(None)
        if name == "insert":
            obj.items.insert(args[0].value, args[1])
            return ConstVariable(None)
        if name == "pop":
            return obj.items.pop(args[0].value if args else -1)
        if name == "copy":
            return ListVariable(list(obj.items))
    if isinstance(obj, DictVariable):
        items = obj.items
        if name == "keys":
            return TupleVariable([ConstVariable(k) for k in items])
        if name == "values":
            return TupleVariable(list(items.values()))
        if name == "items":
            return TupleVariable([TupleVariable([ConstVariable(k), v]) for k, v in items.items()])
        if name == "get":
            default = args[1] if len(args) > 1 else ConstVariable(None)
            return items.get(args[0].value, default)
        if name == "update":
            items.update(args[0].items if args else {})
            items.update(kwargs)
            return ConstVariable(None)
        if name == "pop":
            return items.pop(args[0].value, *(args[1:2]))
        if name == "setdefault":
            return items.setdefault(args[0].value, args[1] if len(args) > 1 else
                                    ConstVariable(None))
        if name == "copy":
            return DictVariable(dict(items))
    if isinstance(obj, NewObjectVariable) and name in ("to_tuple", "keys", "values"):
        present = {k: v for k, v in obj.fields.items()
                   if not (isinstance(v, ConstVariable) and v.value is None)}
        if name == "keys":
            return TupleVariable([ConstVariable(k) for k in present])
        return TupleVariable(list(present.values()))
    if isinstance(obj, SizeVariable) and name == "numel":
        total = 1
        for item in obj.items:
            total = total * (item.expr if isinstance(item, SymIntVariable) else item.value)
        return sym_value(total)
    if isinstance(obj, (TupleVariable, ListVariable)) and name in ("index", "count"):
        values = [i.value if isinstance(i, ConstVariable) else i for i in obj.items]
        if not all(isinstance(i, ConstVariable) for i in obj.items):
            raise Unsupported(f"{name}() over non-constant items")
        return ConstVariable(getattr(values, name)(args[0].value))
    raise Unsupported(f"method {name}() of {type(obj).__name__}")
