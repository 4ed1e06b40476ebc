"""Small functions, one construct each, for the construct table in test_constructs.py."""

from __future__ import annotations

import contextlib
import dataclasses
import math
from collections import namedtuple

import torch
import torch.nn.functional as F
from transformers.modeling_outputs import CausalLMOutput

SCALE = 3
FLAGS = {"double": True}


@dataclasses.dataclass
class Cfg:
    n_head: int = 2
    eps: float = 1e-5
    act: str = "relu"


CFG = Cfg()
Pair = namedtuple("Pair", ["a", "b"])


@dataclasses.dataclass
class Out:
    loss: torch.Tensor
    logits: torch.Tensor
    extra: object = None


# ---------------------------------------------------------------- arithmetic and torch calls
def add(x):
    return x + x


def radd(x):
    return 2.0 + x * 3


def sub_neg(x):
    return -(x - 1.5)


def div_pow(x):
    return (x / 2) ** 2


def matmul_op(x):
    return x @ x.transpose(0, 1)


def torch_fns(x):
    return torch.tanh(torch.exp(x) - 1)


def tensor_methods(x):
    return x.sigmoid().mul(2).sum(dim=-1, keepdim=True)


def functional(x):
    return F.gelu(F.relu(x))


def softmax_dim(x):
    return torch.softmax(x, dim=-1)


def comparisons_tensor(x):
    return (x > 0).float() + (x <= 0.5).to(x.dtype)


def where_fn(x):
    return torch.where(x > 0, x, x * 0.1)


def keyword_args(x):
    return torch.sum(x, dim=1, keepdim=False)


def reductions(x):
    return x.mean(-1) + x.amax(dim=-1)


def unary_ops(x):
    return abs(x) + (~(x > 0)).float()


# ---------------------------------------------------------------- sizes
def shape_index(x):
    return x.reshape(x.shape[0] * x.shape[1])


def size_call(x):
    return x.view(x.size(0), -1, 2)


def len_tensor(x):
    return x * len(x)


def int_of_size(x):
    n = int(x.shape[0])
    return x.sum() / n


def size_arith(x):
    b, t = x.shape
    return x.view(b * t // 2, 2) + (b - 1) % 3


def shape_unpack_star(x):
    *lead, last = x.shape
    return x.reshape(-1, last).sum(0) + len(lead)


def size_return(x):
    return x.shape[0] * 2, x.size()


def numel_fn(x):
    return x.flatten() * 0 + x.numel()


def size_float(x):
    return x * (x.shape[1] ** -0.5)


def size_branch_static(x):
    if x.shape[1] == 4:
        return x * 2
    return x


def size_max_min(x):
    m = max(x.shape[0], 1)
    return x.sum(0) / m


def size_compare_chain(x):
    if 0 < x.shape[1] < 100:
        return x + 1
    return x - 1


def shape_eq(x):
    y = x * 2
    if y.shape == x.shape:
        return y
    return x


def arange_size(x):
    pos = torch.arange(x.shape[0], device=x.device)
    return x + pos.unsqueeze(1).to(x.dtype)


def new_zeros_size(x):
    return x + torch.zeros(x.shape[0], x.shape[1], dtype=x.dtype)


def ones_like(x):
    return torch.ones_like(x) + x


def assert_size(x):
    assert x.shape[1] > 0, "empty rows"
    return x + 1


def dim_ndim(x):
    return x.sum(dim=x.dim() - 1) * x.ndim


# ---------------------------------------------------------------- containers
def build_tuple(x):
    t = (x, x + 1)
    return t[0] * t[1]


def build_list_index(x):
    items = [x, x * 2, x * 3]
    return items[-1] - items[0]


def list_append_loop(x):
    out = []
    for i in range(3):
        out.append(x * i)
    return torch.stack(out)


def dict_build_get(x):
    d = {"a": x, "b": x + 1}
    return d["a"] + d.get("b") + d.get("c", 0)


def dict_items_loop(x):
    d = {"a": 1.0, "b": 2.0}
    total = x
    for key, value in d.items():
        total = total + value
    return total


def unpack_tuple(x):
    a, b = x.chunk(2, dim=-1)
    return a * b


def unpack_ex(x):
    first, *rest = (x, x + 1, x + 2)
    return first + rest[1]


def tuple_concat(x):
    shape = (1,) + tuple(x.shape)
    return x.reshape(shape)


def list_comprehension(x):
    return sum([x * i for i in range(4)])


def dict_comprehension(x):
    d = {str(i): x + i for i in range(3)}
    return d["2"] - d["0"]


def nested_comprehension(x):
    parts = [[x * i * j for j in range(2)] for i in range(2)]
    return parts[1][1] + parts[0][1]


def return_dict(x):
    return {"y": x * 2, "n": 3}


def return_nested(x):
    return (x, [x + 1, {"z": x - 1}]), None


def slices_list(x):
    items = [x, x + 1, x + 2, x + 3]
    return sum(items[1:3]) + items[::2][1]


def input_list(xs):
    return xs[0] + xs[1]


def input_dict(d):
    return d["a"] * d["b"]


def input_tuple_unpack(pair):
    a, b = pair
    return a - b


def enumerate_zip(x):
    total = x
    for i, (a, b) in enumerate(zip([1.0, 2.0], [3.0, 4.0])):
        total = total + i * a * b
    return total


def dict_update(x):
    d = {"a": x}
    d.update(b=x * 2)
    d["c"] = x * 3
    return d["a"] + d["b"] + d["c"]


def contains_op(x):
    keys = ("a", "b")
    if "a" in keys and "z" not in keys:
        return x + 1
    return x


def list_extend_pop(x):
    items = [x]
    items.extend([x + 1, x + 2])
    last = items.pop()
    return last + len(items)


# ---------------------------------------------------------------- control flow
def if_const(x):
    if SCALE > 2:
        return x * SCALE
    return x


def global_dict_flag(x):
    if FLAGS["double"]:
        return x * 2
    return x


def while_loop(x):
    i = 0
    while i < 3:
        x = x + i
        i += 1
    return x


def for_range_unroll(x):
    for i in range(1, 4):
        x = x * i
    return x


def for_over_tensor_list(x):
    acc = 0
    for t in (x, x * 2):
        acc = acc + t.sum()
    return acc


def break_continue(x):
    for i in range(10):
        if i == 1:
            continue
        if i > 3:
            break
        x = x + i
    return x


def ternary(x):
    y = x * 2 if x.shape[-1] > 2 else x
    return y


def and_or(x):
    a = None
    b = a or x
    c = b is not None and b
    return c + 1


def is_none_branch(x, mask=None):
    if mask is None:
        return x * 2
    return x * mask


def try_finally(x):
    try:
        y = x + 1
    finally:
        y = y * 2
    return y


def try_except_noraise(x):
    try:
        y = x * 3
    except RuntimeError:
        y = x
    return y


def isinstance_check(x):
    if isinstance(x, torch.Tensor) and not isinstance(x, (list, tuple)):
        return x + 1
    return x


def fstring(x):
    name = f"layer_{SCALE}_{x.dim()}"
    if name == "layer_3_2":
        return x * 2
    return x


def no_grad_stops_gradient(x):
    w = x.detach().requires_grad_(False)
    with torch.no_grad():
        y = w * 2
    return y + x


def with_no_grad(x):
    with torch.no_grad():
        y = x * 2
    return y + 1


def _maybe_no_grad(enabled):
    # transformers' maybe_autocast: a real context manager, or a nullcontext that does nothing
    return torch.no_grad() if enabled else contextlib.nullcontext()


def with_null_context(x):
    with _maybe_no_grad(False):
        y = x * 2
    with contextlib.nullcontext(x) as z:
        with torch.no_grad():
            w = z * 3
        y = y + w
    return y, torch.is_grad_enabled()


def nested_if(x):
    if x.dim() == 2:
        if x.dtype == torch.float32:
            return x + 1
    return x


def builtin_misc(x):
    vals = [3, 1, 2]
    k = sorted(vals)[0] + min(vals) + max(*vals) + abs(-1) + round(2.4) + sum(vals)
    ok = all([True, 1]) and not any([0, False])
    return x * k if ok else x


def math_fns(x):
    return x * math.sqrt(4.0) + math.floor(2.5) + math.pi


def getattr_hasattr(x):
    if hasattr(CFG, "eps") and getattr(CFG, "missing", None) is None:
        return x + getattr(CFG, "eps")
    return x


def bool_int_float(x):
    return x * float(2) + int(3.7) + bool(1)


def tuple_list_conversion(x):
    shape = list(x.shape)
    shape[-1] = -1
    return x.reshape(tuple(shape))


# ---------------------------------------------------------------- functions and closures
def _helper(a, b=2, *rest, scale=1.0, **extra):
    out = a * b * scale
    for r in rest:
        out = out + r
    for key in extra:
        out = out + extra[key]
    return out


def call_helper_defaults(x):
    return _helper(x)


def call_helper_kwargs(x):
    return _helper(x, 3, 1.0, 2.0, scale=0.5, bias=1.0)


def call_star_args(x):
    args = (x, 2)
    kwargs = {"scale": 3.0}
    return _helper(*args, **kwargs)


def closure_fn(x):
    k = 3

    def inner(y):
        return y * k

    return inner(x)


def closure_mutation(x):
    total = x

    def add_to(v):
        nonlocal total
        total = total + v

    add_to(1.0)
    add_to(2.0)
    return total


def lambda_fn(x):
    f = lambda t, s=2: t * s  # noqa: E731
    return f(x) + f(x, s=3)


def recursion_depth(x, n=3):
    if n == 0:
        return x
    return recursion_depth(x + 1, n - 1)


def config_read(x):
    if CFG.act == "relu":
        x = torch.relu(x)
    return x * CFG.n_head + CFG.eps


def dataclass_output(x):
    return Out(loss=x.sum(), logits=x * 2)


def namedtuple_output(x):
    return Pair(x, x + 1)


def namedtuple_use(x):
    p = Pair(a=x, b=x * 2)
    return p.a + p[1]


def dataclass_build_local(x):
    c = Cfg(n_head=4)
    return x * c.n_head


def method_of_object(x):
    return x + len(CFG.__class__.__name__)


class _Base:
    def scale(self, x):
        return x * 2


class _Child(_Base):
    def scale(self, x):
        return super().scale(x) + 1


_CHILD = _Child()


def super_call(x):
    return _CHILD.scale(x)


class _LN(torch.nn.LayerNorm):
    def forward(self, x):
        return super().forward(x) * 2


_LN_MODULE = _LN(4)


def module_super_forward(x):
    return _LN_MODULE(x)


# ---------------------------------------------------------------- in-place and indexing
def inplace_method(x):
    y = x * 1
    y.add_(1)
    y.mul_(2)
    return y


def inplace_operator(x):
    y = x + 0
    y += 2
    y *= x
    return y


def mutate_input(x):
    x.add_(1)
    return x * 2


def setitem_slice(x):
    y = x.clone()
    y[:, 0] = 5.0
    return y


def setitem_row_tensor(x):
    y = x.clone()
    y[0] = x[-1] * 2
    return y


def setitem_mask(x):
    y = x.clone()
    y[y > 0] = 0.0
    return y


def getitem_basic(x):
    return x[1:, ::2] + x[:-1, None, 0].unsqueeze(-1).squeeze(1)


def getitem_ellipsis(x):
    return x[..., -1]


def getitem_symbolic(x):
    n = x.shape[0]
    return x[: n // 2]


def index_tensor(x):
    idx = torch.arange(2)
    return x[:, :2] + idx.to(x.dtype) + x[:, idx]


def gather_like(x):
    idx = x.argmax(dim=-1, keepdim=True)
    return torch.gather(x, -1, idx)


def cat_stack(x):
    return torch.cat([x, x * 2], dim=-1).sum(-1) + torch.stack((x, x), 0).sum(0).sum(-1)


def split_view(x):
    q, k = x.split(x.shape[-1] // 2, dim=-1)
    return (q * k).contiguous().view(-1)


def type_conversions(x):
    return x.to(torch.float64).float().double().to(dtype=torch.float32)


def dtype_checks(x):
    if x.dtype.is_floating_point and x.is_floating_point():
        return x.half().float()
    return x


def device_read(x):
    return torch.zeros_like(x, device=x.device) + x


# ---------------------------------------------------------------- graph breaks
def break_item(x):
    return x * x.sum().item()


def break_tensor_branch(x):
    if x.sum() > 0:
        return x + 1
    return x - 1


def break_print(x):
    print("hello")
    return x + 1


def break_global_write(x):
    global SCALE
    SCALE = 3
    return x + 1


def break_raise(x):
    if x.dim() == 2:
        raise ValueError("no")
    return x


def break_tolist(x):
    return x.sum(0).tolist()


def break_attr_write(x):
    CFG.scratch = getattr(CFG, "scratch", 0) + 1  # a net change to Python state
    return x + 1


def break_input_list_mutation(xs):
    xs.append(1)
    return xs[0] + 1


def break_generator(x):
    def gen():
        yield x

    g = gen()
    next(g)
    return next(g)  # StopIteration in eager: the break lets eager raise it


def next_of_generator(x):
    def gen():
        yield x + 1
        yield x * 2

    g = gen()
    return next(g) + next(iter(g))


def break_autocast(x):
    with torch.autocast("cpu"):
        return x @ x.T


def break_in_null_context(x):
    with contextlib.nullcontext():
        print("inside")
        return x + 1


def break_unknown_object_call(x):
    return x + len(_Opaque()())


class _Opaque:
    # No instance __dict__: capture tracks objects built in compiled code as attribute dicts
    # (capture/objects.py), so this one stays a break naming the class.
    __slots__ = ("state",)

    def __call__(self):
        return [1, 2]


def break_mask_index(x):
    return x[x > 0]


def model_output(x):
    out = CausalLMOutput(loss=None, logits=x * 2)
    first = out[0]
    return CausalLMOutput(loss=first.sum(), logits=out.logits + out.to_tuple()[0])
