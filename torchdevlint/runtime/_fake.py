"""The pretend accelerator's machinery (imports torch; see the package docstring for its use).

How it works:

* A tensor "on the accelerator" is a real CPU tensor whose *storage* carries a tag (the
  pretend device). Views, ``.data``, ``detach()``, ``nn.Parameter`` and ``param.data = ...``
  share the storage, so they share the device, as on a GPU. C++ never sees anything but CPU
  tensors, so autograd, optimizers and every CPU kernel run unchanged.
* :class:`_DeviceCheck`, a ``TorchDispatchMode``, sees every aten operation (forward,
  backward, optimizer kernels), checks its tensor arguments against the table of which of
  them must share a device (``_op_table.py``, generated from torch's own
  ``native_functions.yaml``) and raises torch's GPU messages; it tags what it returns.
* :class:`_DeviceTranslate`, a ``TorchFunctionMode``, sees the calls of user code: it
  answers ``tensor.device`` / ``is_cuda`` with the pretend device, turns ``device="cuda"``
  into a CPU allocation whose result is tagged, and records for the operations underneath
  which device the call asked for, so that a CPU tensor that C++ fills in inside a call on
  accelerator tensors is told from one that user code asked for.
* ``torch.cuda`` / ``torch.accelerator`` / ``torch.backends.mps`` functions are patched to
  describe a GPU machine, and ``torch.load`` / ``torch.save`` keep the device in checkpoints.
"""
from __future__ import annotations

import contextlib
import functools
import threading
import types
from typing import Optional

import torch
from torch.overrides import TorchFunctionMode
from torch.utils._python_dispatch import TorchDispatchMode

from torchdevlint.runtime._op_table import COMPOSITE, NO_CHECK, STRUCTURED

# pytest leaves this module's frames out of tracebacks (the plugin drops them elsewhere too)
__tracebackhide__ = True

_TAG = "_torchdevlint_device"
_PINNED = "_torchdevlint_pinned"
CPU = torch.device("cpu")
KINDS = ("cuda", "mps")


class _State:
    """What the active pretend accelerator looks like (None when none is active)."""

    def __init__(self, kind: str, count: int):
        self.kind = kind
        self.count = count
        self.current = 0
        self.cpu_only = False

    def device(self, index: Optional[int] = None) -> torch.device:
        if self.kind == "mps":
            return torch.device("mps", 0)
        return torch.device(self.kind, self.current if index is None else index)

    def available(self) -> bool:
        return not self.cpu_only


_state: Optional[_State] = None
_frames = threading.local()  # the stack of user-level calls (see _Frame)


def is_active() -> bool:
    return _state is not None


_mode_enabled = getattr(torch._C, "_is_torch_function_mode_enabled", lambda: True)


def _disabled_tf():
    """Tensor methods called here must not come back through _DeviceTranslate."""
    if _mode_enabled():
        return torch._C.DisableTorchFunction()
    return contextlib.nullcontext()


def _storage(tensor):
    try:
        return tensor.untyped_storage()
    except ValueError:
        # an uninitialized parameter (a lazy module's, moved before its first call) refuses
        # every method but a few through its __torch_function__; its storage carries the
        # device its materialize() reads back (found by the ModuleInfo sweep: LazyLinear)
        with torch._C.DisableTorchFunctionSubclass():
            return tensor.untyped_storage()


def _storage_device(tensor):
    try:
        storage = _storage(tensor)
    except (RuntimeError, NotImplementedError, TypeError):
        return None
    return getattr(storage, _TAG, None)


def device_of(tensor) -> torch.device:
    """The device a tensor is on as the pretend machine sees it."""
    with _disabled_tf():
        return _device_of(tensor)


def _device_of(tensor) -> torch.device:
    """device_of where torch functions are off (the modes' handlers)."""
    tagged = _storage_device(tensor)
    return tagged if tagged is not None else tensor.device


def _tag(tensor, device) -> None:
    try:
        storage = _storage(tensor)
    except (RuntimeError, NotImplementedError, TypeError):
        return
    if device.type == "cpu":
        if getattr(storage, _TAG, None) is not None:
            delattr(storage, _TAG)
    else:
        setattr(storage, _TAG, device)


def _accelerator_type(device) -> bool:
    return _state is not None and device.type == _state.kind


def _type_name(tensor, device) -> str:
    """``torch.cuda.FloatTensor`` for a float tensor on the pretend GPU, as ``toString`` says."""
    name = tensor.type()  # e.g. torch.FloatTensor
    if device.type == "cpu":
        return name
    return name.replace("torch.", f"torch.{device.type}.", 1)


# --- the dispatch mode: every aten op's devices ---------------------------------------------

class _Frame:
    """A user-level call: the device it asked for (``device=``, ``.to(...)``), if any, and the
    accelerator its tensor arguments are on (where C++ fills in CPU for a new tensor)."""
    __slots__ = ("requested", "ambient")

    def __init__(self, requested, ambient):
        self.requested = requested
        self.ambient = ambient


def _frame_stack() -> list:
    stack = getattr(_frames, "stack", None)
    if stack is None:
        stack = _frames.stack = []
    return stack


class _Plan:
    """How to check one aten overload: its argument names, the kind of check and the returns
    that alias an input (those keep the input's device)."""
    __slots__ = ("names", "kind", "method", "aliased", "op", "written")

    def __init__(self, func):
        schema = func._schema
        self.op = func._opname
        overload = func._overloadname
        full = self.op if overload == "default" else f"{self.op}.{overload}"
        self.names = [argument.name for argument in schema.arguments]
        self.aliased = {index for index, ret in enumerate(schema.returns)
                        if ret.alias_info is not None}
        # arguments the op writes (``self`` of an in-place op): TensorIterator's outputs
        self.written = frozenset(argument.name for argument in schema.arguments
                                 if argument.alias_info is not None and argument.alias_info.is_write)
        if self.op in ("copy_", "_copy_from", "_copy_from_and_resize", "_to_copy", "to",
                       "set_", "lift_fresh", "lift_fresh_copy", "lift", "_has_compatible_shallow_copy_type",
                       "_local_scalar_dense", "_pin_memory", "is_pinned", "record_stream",
                       "_make_dep_token", "_assert_async", "is_same_size", "detach",
                       "alias", "_reshape_alias", "view", "_unsafe_view", "empty_like"):
            self.kind = "free"
        elif self.op in ("index", "index_put", "index_put_", "_index_put_impl_", "_unsafe_index",
                         "_unsafe_index_put"):
            self.kind = "index"
        elif self.op == "convolution" or self.op == "_convolution":
            self.kind = "conv"
        elif self.op.startswith("_foreach_"):
            self.kind = "foreach"
        elif self.op in _CPU_ARGUMENTS:
            self.kind = "cpu-args"
        elif self.op == "masked_fill_":
            self.kind = "masked"
        elif full in COMPOSITE:
            self.kind = "composite"
        elif full in NO_CHECK:
            self.kind = "iter"
        else:
            self.kind = "guard"
        # torchgen's names: a structured kernel's wrapper is named after the functional
        # overload (clamp_min.Tensor: clamp_min_Tensor), any other after overload and C++ name
        # (equal: _equal, complex.out: out_complex_out)
        if full in STRUCTURED:
            wrapper = self.op if overload == "default" else f"{self.op}_{overload}"
        else:
            cpp = self.op + ("_out" if any(argument.is_out for argument in schema.arguments) else "")
            wrapper = f"{'' if overload == 'default' else overload}_{cpp}"
        self.method = f"wrapper_CUDA_{wrapper}"


# torch.tensor(data, ...) builds its tensor in C++ and lifts it: a new tensor, like a factory's
_LIFTS = {"lift_fresh", "lift_fresh_copy", "lift"}
# where a composite op is sent to run its parts (its CPU kernel: the composite one)
_CPU_KEYS = torch._C.DispatchKeySet(torch._C.DispatchKey.CPU)

# Arguments that a GPU kernel takes on the CPU (and outputs it returns there).
_CPU_ARGUMENTS = {
    "_pack_padded_sequence": ({"lengths"}, {1}),
    "_pad_packed_sequence": ({"batch_sizes"}, {1}),
    "lstm": ({"batch_sizes"}, set()),
    "gru": ({"batch_sizes"}, set()),
    "rnn_tanh": ({"batch_sizes"}, set()),
    "rnn_relu": ({"batch_sizes"}, set()),
    "_amp_update_scale_": (set(), set()),
    # ctc_loss moves the targets to the log_probs' device itself (LossCTC.cpp) and reads the
    # lengths on the host
    "_ctc_loss": ({"targets", "input_lengths", "target_lengths"}, set()),
    "_ctc_loss_backward": ({"targets", "input_lengths", "target_lengths"}, set()),
}


@functools.lru_cache(maxsize=None)
def _plan(func) -> _Plan:
    return _Plan(func)


def _operands(plan, args, kwargs):
    """(name, tensor, is_output) for every tensor argument; lists give one entry a tensor."""
    found = []
    names = plan.names
    for index, value in enumerate(args):
        name = names[index] if index < len(names) else f"arg{index}"
        if isinstance(value, torch.Tensor):
            found.append((name, value, False))
        elif isinstance(value, (list, tuple)):
            found.extend((name, item, False) for item in value if isinstance(item, torch.Tensor))
    for name, value in kwargs.items():
        output = name.startswith("out")
        if isinstance(value, torch.Tensor):
            found.append((name, value, output))
        elif isinstance(value, (list, tuple)):
            found.extend((name, item, output) for item in value if isinstance(item, torch.Tensor))
    return found


def _mismatch(common, other) -> RuntimeError:
    return RuntimeError("Expected all tensors to be on the same device, but found at least two "
                        f"devices, {common} and {other}!")


# TensorIterator ops whose GPU kernels take no CPU scalars (their iterators don't allow them):
# measured on an H200, a 0-dim CPU input with a 0-dim GPU one fails (mse_loss: "found at least
# two devices, cpu and cuda:0", the first input's device first when every input is 0-dim;
# smooth_l1_loss: an internal assert of the GPU kernel, Loops.cuh, reported here as the device
# error it is)
_NO_CPU_SCALARS = frozenset({"mse_loss", "smooth_l1_loss"})
# ... and arguments that no GPU kernel takes as a CPU scalar, by op: index_fill_'s index (a
# 0-dim CPU index into a GPU tensor fails on an H200, "found at least two devices, cuda:0 and
# cpu!", where its 0-dim CPU value is taken)
_NO_CPU_SCALAR_ARGUMENTS = {"index_fill_": frozenset({"index"}), "index_fill": frozenset({"index"})}


def _iter_check(operands, written=frozenset(), op=None):
    """TensorIterator's rule (compute_types): the common device is the first one that is not
    the CPU, and every operand must be on it, except CPU scalars (0-dim CPU inputs, not
    outputs: an in-place op's ``self`` is one); so the message names the accelerator first,
    whichever operand came first."""
    devices = [_device_of(tensor) for _, tensor, _ in operands]
    common = next((device for device in devices if device.type != "cpu"), CPU)
    if common.type == "cpu":
        return CPU
    scalars = op not in _NO_CPU_SCALARS
    strict = _NO_CPU_SCALAR_ARGUMENTS.get(op, ())
    if not scalars and all(tensor.dim() == 0 for _, tensor, output in operands if not output):
        common = next(device for (_, _, output), device in zip(operands, devices) if not output)
    for (name, tensor, output), device in zip(operands, devices):
        if device == common:
            continue
        if (scalars and device.type == "cpu" and not output and name not in written
                and name not in strict and tensor.dim() == 0):
            continue
        raise _mismatch(common, device)
    return common


def _masked_fill_check(operands):
    """masked_fill_'s GPU kernel checks its arguments itself (Indexing.cu), value first."""
    named = {name: _device_of(tensor) for name, tensor, _ in operands}
    device = named["self"]
    value = named.get("value")
    if value is not None and value != device and value.type != "cpu":
        raise RuntimeError("masked_fill_: Expected inputs to be on same device")
    mask = named.get("mask", device)
    if mask != device:
        raise RuntimeError("expected self and mask to be on the same device, but got mask on "
                           f"{mask} and self on {device}")
    return device


def _guard_check(method, operands):
    """The device guard's rule (check_and_update_common_device): every tensor argument on the
    device of the first one."""
    common = None
    for name, tensor, _ in operands:
        device = _device_of(tensor)
        if common is None:
            common = device
        elif device != common:
            raise RuntimeError(f"Expected all tensors to be on the same device, but got {name} is "
                               f"on {device}, different from other tensors on {common} (when "
                               f"checking argument in method {method})")
    return common or CPU


def _index_check(operands, op):
    """``x[idx]`` and ``x[idx] = v``: indices may stay on the CPU for an accelerator tensor.
    Reading (index's meta function) refuses indices on another accelerator; writing
    (index_put_) moves them to self's device, whatever it is, and then meets the values."""
    self_device = _device_of(operands[0][1])
    reading = op in ("index", "_unsafe_index")
    rest = []
    for name, tensor, output in operands[1:]:
        device = _device_of(tensor)
        if name == "indices":
            if reading and device != self_device and device.type != "cpu":
                raise RuntimeError("indices should be either on cpu or on the same device as the "
                                   f"indexed tensor ({self_device})")
        else:
            rest.append((name, tensor, output))
    return _iter_check([operands[0]] + rest)


_DECOMPOSE = object()  # a composite op on tensors of several devices: run its parts one by one


def _block_diag_check(operands):
    first = _device_of(operands[0][1])
    for index, (_, tensor, _) in enumerate(operands[1:], 1):
        device = _device_of(tensor)
        if device != first:
            raise RuntimeError("torch.block_diag: input tensors must all be on the same device. "
                               f"Input 0 is on device {first} and input {index} is on device {device}")


# Composite ops whose kernel checks the devices itself before its parts run (it reads
# tensor.device(), which C++ sees as the CPU here)
_OWN_CHECKS = {"block_diag": _block_diag_check}


# the native kernel a GPU runs for a CPU input (no cuDNN for it): (transposed, 2 or 3 spatial
# dimensions, a 1-d convolution being a 2-d one) -> its wrapper
_SLOW_CONV = {(False, 2): "wrapper_CUDA___slow_conv2d_forward",
              (True, 2): "wrapper_CUDA_slow_conv_transpose2d",
              (True, 3): "wrapper_CUDA__slow_conv_transpose3d"}


def _batch_norm(func, args, kwargs):
    """batch_norm on a GPU picks cuDNN where it can (Normalization.cpp, _batch_norm_impl_index),
    and cudnn_batch_norm's device guard speaks, not native_batch_norm's: measured on an H200,
    BatchNorm2d on a GPU with its weight left on the CPU, and instance_norm, which runs
    batch_norm. (native_batch_norm called by itself stays native.)"""
    if func in (torch.batch_norm, torch.instance_norm):
        # (input, weight, bias, running_mean, running_var, training or use_input_stats, ...)
        names = ("input", "weight", "bias", "running_mean", "running_var", "training")
    else:  # F.batch_norm/instance_norm(input, running_mean, running_var, weight, bias, ...)
        names = ("input", "running_mean", "running_var", "weight", "bias", "training")
    bound = dict(zip(names, args), **kwargs)
    # cudnn_batch_norm's own order
    ordered = [bound.get(name) for name in _CUDNN_BATCH_NORM_ARGUMENTS]
    operands = [(name, t, False) for name, t in zip(_CUDNN_BATCH_NORM_ARGUMENTS, ordered)
                if isinstance(t, torch.Tensor)]
    if len({device_of(t) for _, t, _ in operands}) > 1 and _uses_cudnn_batch_norm(
            *ordered, bool(bound.get("training", False))):
        _guard_check("wrapper_CUDA__cudnn_batch_norm", operands)
    return _plain_call(func, args, kwargs)


_CUDNN_BATCH_NORM_ARGUMENTS = ("input", "weight", "bias", "running_mean", "running_var")


def _uses_cudnn_batch_norm(source, weight, bias, mean, var, training) -> bool:
    """Whether a GPU runs batch_norm through cuDNN (_batch_norm_impl_index's conditions)."""
    if not (isinstance(source, torch.Tensor) and isinstance(weight, torch.Tensor)
            and isinstance(bias, torch.Tensor)):
        return False
    if device_of(source).type != "cuda" or not torch.backends.cudnn.enabled:
        return False
    if torch.bfloat16 in (source.dtype, weight.dtype) or (
            source.dtype == torch.float16 and weight.dtype != torch.float32):
        return False
    stats = (mean is not None and var is not None) or (mean is None and var is None and training)
    batch = source.shape[0] if source.dim() else 0
    return (stats and source.dim() >= 3 and batch <= (880801 if training else 65535)
            and source.numel() < 2 ** 31 - 1)


def _uses_mkldnn(source, weight, args) -> bool:
    """ConvParams::use_mkldnn (Convolution.cpp): whether a float CPU input takes oneDNN's
    convolution, whose type check speaks before any device guard ("Input type
    (torch.FloatTensor) and weight type (torch.cuda.FloatTensor) should be the same or input
    should be a MKLDNN tensor ..."), measured on an H200 for nn.Conv1d/2d and their transposes;
    the others take the native slow convolution. A 1-d convolution is seen as a 2-d one."""
    if not (torch.backends.mkldnn.is_available() and torch.backends.mkldnn.enabled):
        return False
    if source.dtype != torch.float32 or source.dim() < 3:
        return False
    stride, padding, dilation, transposed, output_padding, groups = (
        list(args[3:9]) + [None] * 6)[:6]
    stride, dilation = list(stride or [1]), list(dilation or [1])
    transposed, groups = bool(transposed), int(groups or 1)
    if transposed and any(pad >= step for pad, step in zip(output_padding or [], stride)):
        return False
    shape, kernel = list(source.shape), list(weight.shape)
    if source.dim() == 3:  # view1d_as_2d
        shape.insert(2, 1)
        kernel.insert(2, 1)
    batch = shape[0]
    strided, dilated = any(step != 1 for step in stride), any(step != 1 for step in dilation)
    return ((strided or dilated or batch >= 16 or kernel[-1] != 1 or kernel[-2] != 1
             or torch.get_num_threads() > 1)
            and (groups > 1 or (kernel[-1] > 3 and kernel[-2] > 3) or batch > 1
                 or shape[0] * shape[1] * shape[2] * shape[3] > 20480))


def _conv_check(operands, args):
    named = {name: tensor for name, tensor, _ in operands}
    source = named.get("input")
    device = _device_of(source)
    weight = named.get("weight")
    if (device.type == "cpu" and weight is not None and _device_of(weight) != device
            and _uses_mkldnn(source, weight, args)):
        raise RuntimeError(f"Input type ({_type_name(source, device)}) and weight type "
                           f"({_type_name(weight, _device_of(weight))}) should be the same or "
                           "input should be a MKLDNN tensor and weight is a dense tensor")
    if device.type == "cpu" and weight is not None:
        # the GPU kernel takes the call (weight is there) and, for a CPU input, picks its
        # native slow convolution, whose device guard names the first other argument
        transposed = bool(args[6]) if len(args) > 6 else False
        method = _SLOW_CONV.get((transposed, max(weight.dim() - 2, 2)))
        if method is not None:
            _guard_check(method, [("self", source, False)] + [
                (name, named[name], False) for name in ("weight", "bias") if name in named])
    for name in ("weight", "bias"):
        other = named.get(name)
        if other is None:
            continue
        other_device = _device_of(other)
        if other_device != device:
            suffix = ""
            if device.type == "cpu":  # the CPU input takes the mkldnn path, which says more
                suffix = f" or input should be a MKLDNN tensor and {name} is a dense tensor"
            raise RuntimeError(f"Input type ({_type_name(source, device)}) and {name} type "
                               f"({_type_name(other, other_device)}) should be the same{suffix}")
    return device


def _foreach_check(args, kwargs, plan):
    """Foreach kernels fall back to one op per index: the i-th tensors of every list meet."""
    lists = [value for value in list(args) + list(kwargs.values())
             if isinstance(value, (list, tuple)) and value and isinstance(value[0], torch.Tensor)]
    singles = [("other", value, False) for value in list(args) + list(kwargs.values())
               if isinstance(value, torch.Tensor)]
    first = None
    for index in range(len(lists[0]) if lists else 0):
        operands = [("self", items[index], False) for items in lists
                    if index < len(items) and isinstance(items[index], torch.Tensor)]
        device = _iter_check(operands + singles)
        first = device if first is None else first
    return first or CPU


class _DeviceCheck(TorchDispatchMode):
    @classmethod
    def _should_skip_dynamo(cls):
        # torch wraps a mode's handler to keep dynamo out of it, at two Python calls per aten
        # op; this one never runs under dynamo (torch.compile is not supported on it)
        return False

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        with _disabled_tf():
            device = self._output_device(func, args, kwargs)
            if device is _DECOMPOSE:
                return self._decomposed(func, args, kwargs)
            out = func(*args, **kwargs)
            if device is not None and device.type != "cpu":
                plan = _plan(func)
                aliased = plan.aliased
                if plan.op == "to" and args and out is not args[0]:
                    # ``aten::to`` may return its input (the schema's alias), but here it copied:
                    # inference mode dispatches it whole instead of as ``_to_copy``
                    aliased = frozenset()
                self._tag_outputs(out, device, aliased, plan.op)
        return out

    def _decomposed(self, func, args, kwargs):
        """A composite op (no GPU kernel of its own, so no device check of its own) whose
        tensors are on several devices: its CPU kernel, the same C++ as on a GPU, runs with this
        mode back on, so that each op it is made of is checked (and tags what it makes) as on
        a GPU. The tensors it allocates come from its first tensor's options (``at::empty({0},
        self.options())``, the idiom of ATen's composites)."""
        first = next(tensor for _, tensor, _ in _operands(_plan(func), args, kwargs))
        stack = _frame_stack()
        stack.append(_Frame(None, _device_of(first)))
        try:
            with self:
                return func.redispatch(_CPU_KEYS, *args, **kwargs)
        finally:
            stack.pop()

    @staticmethod
    def _output_device(func, args, kwargs):
        state = _state
        if state is None:
            return None
        stack = _frame_stack()
        frame = stack[-1] if stack else None
        if frame is not None and frame.requested is not None:
            return frame.requested
        plan = _plan(func)
        if plan.op in _LIFTS:  # torch.tensor(data) built in C++ inside a library call
            return frame.ambient if frame is not None else None
        operands = _operands(plan, args, kwargs)
        if not operands:
            return frame.ambient if frame is not None else None
        # fast path: nothing on the accelerator
        if not any(_storage_device(tensor) is not None for _, tensor, _ in operands):
            return CPU
        kind = plan.kind
        if kind == "free":
            return _device_of(operands[0][1])
        if kind == "composite":
            first = _device_of(operands[0][1])
            if all(_device_of(tensor) == first for _, tensor, _ in operands):
                return first
            own = _OWN_CHECKS.get(plan.op)
            if own is not None:
                own(operands)
            return _DECOMPOSE
        if kind == "iter":
            return _iter_check(operands, plan.written, plan.op)
        if kind == "masked":
            return _masked_fill_check(operands)
        if kind == "index":
            return _index_check(operands, plan.op)
        if kind == "conv":
            return _conv_check(operands, args)
        if kind == "foreach":
            return _foreach_check(args, kwargs, plan)
        if kind == "cpu-args":
            allowed, _ = _CPU_ARGUMENTS[plan.op]
            return _guard_check(plan.method, [op for op in operands if op[0] not in allowed])
        return _guard_check(plan.method, operands)

    @staticmethod
    def _tag_outputs(out, device, aliased, op):
        cpu_outputs = _CPU_ARGUMENTS.get(op, (set(), set()))[1]
        if isinstance(out, torch.Tensor):
            if (0 not in aliased or op in _LIFTS) and 0 not in cpu_outputs:
                _tag(out, device)
        elif isinstance(out, (list, tuple)):
            for index, item in enumerate(out):
                if index in aliased or index in cpu_outputs:
                    continue
                if isinstance(item, torch.Tensor):
                    _tag(item, device)
                elif isinstance(item, (list, tuple)):
                    for inner in item:
                        if isinstance(inner, torch.Tensor):
                            _tag(inner, device)


# --- the function mode: what user code asks for and sees ------------------------------------

def _parse_device(value) -> Optional[torch.device]:
    if value is None:
        return None
    if isinstance(value, torch.device):
        device = value
    elif isinstance(value, int):
        device = torch.device(_state.kind, value) if _state is not None else torch.device("cuda", value)
    else:
        device = torch.device(value)
    return device


def _not_compiled(kind: str) -> Exception:
    if kind == "cuda":
        return AssertionError("Torch not compiled with CUDA enabled")
    return RuntimeError("PyTorch is not linked with support for mps devices")


def _resolve(device: torch.device) -> torch.device:
    """An accelerator device with its index, or raise as a machine without it would."""
    state = _state
    if state.cpu_only:
        raise _not_compiled(state.kind)
    if state.kind == "mps":
        return torch.device("mps", 0)
    index = state.current if device.index is None else device.index
    if index >= state.count:
        raise RuntimeError("CUDA error: invalid device ordinal\nCUDA kernel errors might be "
                           "asynchronously reported at some other API call, so the stacktrace "
                           "below might be incorrect.\nFor debugging consider passing "
                           "CUDA_LAUNCH_BLOCKING=1")
    return torch.device(state.kind, index)


def _tensor_arguments(args, kwargs):
    """A call's tensor arguments in order, those in lists and tuples among them."""
    for value in list(args) + list(kwargs.values()):
        if isinstance(value, torch.Tensor):
            yield value
        elif isinstance(value, (list, tuple)):
            yield from (item for item in value if isinstance(item, torch.Tensor))


def _first_accelerator(args, kwargs):
    """The accelerator of the first tensor argument on one, or None."""
    return next((device for device in map(_storage_device, _tensor_arguments(args, kwargs))
                 if device is not None), None)


def _first_tensor_accelerator(args, kwargs):
    """The accelerator of a call's first tensor argument, None if that one is on the CPU: what
    C++ allocates inside the call comes from it (``at::empty({0}, self.options())``)."""
    first = next(_tensor_arguments(args, kwargs), None)
    return None if first is None else _storage_device(first)


@contextlib.contextmanager
def _frame(requested, ambient):
    stack = _frame_stack()
    stack.append(_Frame(requested, ambient))
    try:
        yield
    finally:
        stack.pop()


def _copy_to(tensor, device, dtype=None, non_blocking=False, memory_format=torch.preserve_format):
    """A copy of ``tensor`` on ``device`` (the copy a GPU transfer makes), with autograd."""
    with _frame(device, None):
        return torch.Tensor.to(tensor, "cpu", dtype=dtype, non_blocking=non_blocking, copy=True,
                               memory_format=memory_format)


def _to(func, args, kwargs):
    tensor = args[0]
    rest = args[1:]
    source = device_of(tensor)
    if rest and isinstance(rest[0], torch.Tensor):  # .to(other)
        other = rest[0]
        device, dtype = device_of(other), other.dtype
        non_blocking = bool(rest[1]) if len(rest) > 1 else kwargs.get("non_blocking", False)
        copy = bool(rest[2]) if len(rest) > 2 else kwargs.get("copy", False)
        memory_format = kwargs.get("memory_format", torch.preserve_format)
    else:
        clean = dict(kwargs)
        copy = clean.pop("copy", False)
        positional = list(rest)
        # .to(device, dtype, non_blocking, copy) and .to(dtype, non_blocking, copy)
        if len(positional) >= 3 and isinstance(positional[-1], bool) and isinstance(positional[-2], bool):
            copy = positional.pop()
        elif len(positional) == 3 and isinstance(positional[-1], bool) \
                and isinstance(positional[0], torch.dtype):  # not (device, dtype, non_blocking)
            copy = positional.pop()
        positional, clean = _ordinal_devices(positional, clean)
        device, dtype, non_blocking, memory_format = torch._C._nn._parse_to(*positional, **clean)
        if memory_format is None:
            memory_format = torch.preserve_format
        if device is not None and (device.type in KINDS):
            device = _resolve(device)
    if device is None or device == source:
        if device is not None and device.type != "cpu":  # C++ must not see the accelerator
            return torch.Tensor.to(tensor, "cpu", dtype=dtype, non_blocking=non_blocking,
                                   copy=bool(copy), memory_format=memory_format)
        return func(*args, **kwargs)
    if device.type not in ("cpu",) and not _accelerator_type(device):
        return func(*args, **kwargs)  # meta and other real devices
    return _copy_to(tensor, device, dtype, non_blocking, memory_format)


def _cuda(func, args, kwargs):
    tensor = args[0]
    device = args[1] if len(args) > 1 else kwargs.get("device")
    kind = "cuda" if func is torch.Tensor.cuda else "mps"
    if _state.kind != kind:
        raise _not_compiled(kind)
    target = _resolve(_parse_device(device) if device is not None else torch.device(kind))
    if device_of(tensor) == target:
        return tensor
    return _copy_to(tensor, target, non_blocking=kwargs.get("non_blocking", False),
                    memory_format=kwargs.get("memory_format", torch.preserve_format))


def _cpu(func, args, kwargs):
    tensor = args[0]
    if device_of(tensor).type == "cpu":
        return func(*args, **kwargs)
    return _copy_to(tensor, CPU, memory_format=kwargs.get("memory_format", torch.preserve_format))


def _numpy(func, args, kwargs):
    device = device_of(args[0])
    if device.type != "cpu":
        raise TypeError(f"can't convert {device} device type tensor to numpy. Use Tensor.cpu() to "
                        "copy the tensor to host memory first.")
    return func(*args, **kwargs)


def _device_getter(func, args, kwargs):
    return device_of(args[0])


def _is_type(kind):
    def getter(func, args, kwargs):
        return device_of(args[0]).type == kind
    return getter


def _legacy_type_of(target) -> Optional[tuple]:
    """(``"cuda"`` or ``"cpu"``, dtype) of a legacy tensor type given to ``Tensor.type``:
    ``torch.cuda.FloatTensor`` (the class, or its name as a string), ``torch.LongTensor``;
    None for anything else (a dtype)."""
    name = target if isinstance(target, str) else \
        f"{getattr(target, '__module__', '')}.{getattr(target, '__name__', '')}"
    prefix, _, base = name.rpartition(".")
    if prefix not in ("torch", "torch.cuda") or not base.endswith("Tensor") or \
            not hasattr(_LEGACY_CPU_TYPES, base):
        return None
    return ("cuda" if prefix == "torch.cuda" else "cpu"), getattr(_LEGACY_CPU_TYPES, base).dtype


def _type(func, args, kwargs):
    """``t.type()`` names the pretend device's type (``torch.cuda.FloatTensor``);
    ``t.type(torch.cuda.FloatTensor)`` copies ``t`` to the pretend GPU (code written for torch
    before 0.4, PyTorch-GAN's ``Tensor = torch.cuda.FloatTensor if cuda else ...``), and
    ``t.type(torch.FloatTensor)`` to the CPU; ``t.type(torch.float16)`` stays where it is."""
    tensor = args[0]
    target = args[1] if len(args) > 1 else kwargs.get("dtype")
    if target is None:
        return _type_name(tensor, device_of(tensor))
    legacy = _legacy_type_of(target)
    if legacy is None:
        return func(*args, **kwargs)
    kind, dtype = legacy
    if kind == "cuda" and (_state is None or _state.kind != "cuda"):
        raise _not_compiled("cuda")
    device = _resolve(torch.device("cuda")) if kind == "cuda" else CPU
    if device_of(tensor) == device and tensor.dtype == dtype:
        return tensor
    return _copy_to(tensor, device, dtype=dtype, non_blocking=kwargs.get("non_blocking", False))


def _get_device(func, args, kwargs):
    device = device_of(args[0])
    return -1 if device.type == "cpu" else (device.index or 0)


class _ShowDevice(TorchFunctionMode):
    """While a tensor prints: ``.device`` answers with the pretend device (the suffix
    ``device='cuda:0'`` comes from there); everything else passes."""

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        if func == _DEVICE_GET:  # a fresh method-wrapper each time: equal, not identical
            return device_of(args[0])
        return func(*args, **kwargs)


def _printed(func, args, kwargs):
    if device_of(args[0]).type == "cpu":
        return func(*args, **kwargs)
    # Tensor.__repr__'s own body, so that its reads of .device meet _ShowDevice
    with _ShowDevice():
        return torch._tensor_str._str(args[0], **kwargs)


def _rnn(func, args, kwargs):
    """torch.lstm/gru/rnn_*: C++ checks input, hidden state and weights first (RNN.cpp)."""
    inputs = args[0]
    # (input, hx, params, ...) or, packed, (data, batch_sizes, hx, params, ...); hx is a list
    # for lstm (h and c), a tensor for the others
    packed = len(args) > 3 and isinstance(args[3], (list, tuple))
    hiddens, params = (args[2], args[3]) if packed else (args[1], args[2])
    if not isinstance(hiddens, (list, tuple)):
        hiddens = [hiddens]
    device = device_of(inputs)
    for label, tensors in (("hidden", hiddens), ("parameter", params)):
        for tensor in tensors:
            if isinstance(tensor, torch.Tensor) and device_of(tensor) != device:
                raise RuntimeError(f"Input and {label} tensors are not at the same device, found "
                                   f"input tensor at {device} and {label} tensor at "
                                   f"{device_of(tensor)}")
    dtype = _accelerator_autocast()
    if dtype is not None:
        return _autocast_rnn(func, args, kwargs, dtype)
    return _plain_call(func, args, kwargs)


def _rms_norm(func, args, kwargs):
    """rms_norm: composite on the CPU (its parts' TensorIterator speaks), one fused kernel on
    a GPU whose device guard checks input then weight (measured on an H200 with nn.RMSNorm)."""
    bound = dict(zip(("input", "normalized_shape", "weight", "eps"), args), **kwargs)
    source, weight = bound.get("input"), bound.get("weight")
    if isinstance(source, torch.Tensor) and isinstance(weight, torch.Tensor):
        devices = {device_of(source), device_of(weight)}
        if len(devices) > 1 and any(_accelerator_type(d) and d.type == "cuda" for d in devices):
            _guard_check("wrapper_CUDA___fused_rms_norm",
                         [("input", source, False), ("weight", weight, False)])
    return _plain_call(func, args, kwargs)


def _ctc_loss(func, args, kwargs):
    """ctc_loss moves the targets to log_probs' device and reads the lengths on the host
    itself (LossCTC.cpp), and its mean divides by target_lengths moved to the loss's device:
    a GPU accepts each of them anywhere (measured on an H200 with nn.CTCLoss). C++ moves them
    by the real device, which here is always the CPU, so move target_lengths here first."""
    if len(args) > 3 and isinstance(args[3], torch.Tensor) and isinstance(args[0], torch.Tensor):
        device = device_of(args[0])
        if device_of(args[3]) != device:
            args = (*args[:3], _copy_to(args[3], device), *args[4:])
    return _plain_call(func, args, kwargs)


def _fused_rnn_cell(kernel):
    """torch.lstm_cell/gru_cell with the input on a GPU: C++ takes the fused path (RNN.cpp's
    LSTMCell/GRUCell), ``input @ w_ih.t()`` and ``hx @ w_hh.t()`` as two matmuls, then the
    fused kernel, whose device guard checks gates, previous state and biases. What runs here is
    the CPU path, ``linear`` with the bias inside ``addmm``: another op, other operands, another
    order. Measured on an H200 (torch 2.11): GRUCell or LSTMCell with its hidden state on the CPU
    fails in ``mm`` ("mat2 is on cuda:0, different from other tensors on cpu"), an LSTM cell
    state alone on the CPU in ``_thnn_fused_lstm_cell`` ("cx is on cpu"); RNNCell and an input
    on the CPU take the CPU path there too. An MPS input takes the CPU path, so only the
    pretend CUDA device goes this way."""
    def call(func, args, kwargs):
        names = ("input", "hx", "w_ih", "w_hh", "b_ih", "b_hh")
        bound = dict(zip(names, args), **kwargs)
        inputs, hx = bound["input"], bound["hx"]
        device = device_of(inputs)
        hidden, previous = (hx[0], hx[1]) if kernel == "lstm" else (hx, hx)
        biases = [bound.get("b_ih"), bound.get("b_hh")]
        if device.type == "cuda" and _accelerator_type(device) and any(
                isinstance(t, torch.Tensor) and device_of(t) != device
                for t in (hidden, previous, bound["w_ih"], bound["w_hh"], *biases)):
            input_gates = torch.matmul(inputs, bound["w_ih"].t())
            hidden_gates = torch.matmul(hidden, bound["w_hh"].t())
            # _thnn_fused_{lstm,gru}_cell(input_gates, hidden_gates, cx/hx, input_bias, hidden_bias)
            operands = [("input_gates", input_gates, False), ("hidden_gates", hidden_gates, False),
                        ("cx" if kernel == "lstm" else "hx", previous, False)]
            operands += [(name, bias, False) for name, bias in
                         zip(("input_bias", "hidden_bias"), biases) if bias is not None]
            _guard_check(f"wrapper_CUDA___thnn_fused_{kernel}_cell", operands)
        return _plain_call(func, args, kwargs)
    return call


def _autocast_rnn(func, args, kwargs, dtype):
    """An RNN under ``autocast("cuda")``: cuDNN's RNN runs in the autocast dtype (its autocast
    kernel casts input, state and weights); CPU autocast would hand float16 to oneDNN's RNN,
    which many CPUs cannot run, so cast here and run torch's own RNN kernel."""
    def cast(value):
        if isinstance(value, torch.Tensor) and value.is_floating_point():
            return value.to(dtype)
        if isinstance(value, (list, tuple)):
            return type(value)(cast(item) for item in value)
        return value
    enabled_cpu, mkldnn = torch.is_autocast_enabled("cpu"), torch._C._get_mkldnn_enabled()
    torch.set_autocast_enabled("cpu", False)
    torch._C._set_mkldnn_enabled(False)
    try:
        return _plain_call(func, tuple(cast(value) for value in args), kwargs)
    finally:
        torch._C._set_mkldnn_enabled(mkldnn)
        torch.set_autocast_enabled("cpu", enabled_cpu)


def _host_outputs(*indices):
    """Calls whose GPU kernels return some outputs on the CPU (pack_padded_sequence's
    batch_sizes, pad_packed_sequence's lengths), which C++ built inside the call."""
    def call(func, args, kwargs):
        out = _plain_call(func, args, kwargs)
        with _disabled_tf():
            for index in indices:
                _tag(out[index], CPU)
        return out
    return call


def _tensor_split(func, args, kwargs):
    """tensor_split reads a tensor of split points on the host and says so (TensorShape.cpp)."""
    points = args[1] if len(args) > 1 else kwargs.get("tensor_indices_or_sections",
                                                      kwargs.get("indices_or_sections"))
    if isinstance(points, torch.Tensor):
        device = device_of(points)
        if device.type != "cpu":
            raise RuntimeError("tensor_split expected tensor_indices_or_sections to be on cpu, but "
                               f"it's on {device}")
    return _plain_call(func, args, kwargs)


def _is_ordinal(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _ordinal_devices(args, kwargs):
    """``.to(0)`` and ``.to(device=0)`` with the integer made the accelerator's device: torch
    reads an ordinal through the real accelerator, which a CPU-only build does not have."""
    args = list(args)
    if args and _is_ordinal(args[0]):
        args[0] = _parse_device(args[0])
    if _is_ordinal(kwargs.get("device")):
        kwargs = dict(kwargs, device=_parse_device(kwargs["device"]))
    return args, kwargs


def _parse_to_arguments(func, args, kwargs):
    args, kwargs = _ordinal_devices(args, kwargs)
    return func(*args, **kwargs)


def _plain_call(func, args, kwargs):
    stack = _frame_stack()
    # a factory's tensor arguments are values, not where it allocates: torch.arange(n) of a
    # 0-dim GPU tensor n is made on the default device, as on a GPU
    ambient = None if func in _CONSTRUCTORS else _first_tensor_accelerator(args, kwargs)
    stack.append(_Frame(None, ambient))
    try:
        out = func(*args, **kwargs)
    finally:
        stack.pop()
    # No graph is recorded without grad mode, and there reading grad_fn can raise: a view made
    # under no_grad whose base was then filled in place (nn.Embedding(padding_idx=...)'s
    # reset_parameters: `with torch.no_grad(): self.weight[padding_idx].fill_(0)`) refuses it
    if type(out) is torch.Tensor and torch.is_grad_enabled():
        node = out.grad_fn
        if node is not None:
            _watch_gradients(node, args, kwargs)
    return out


def _watch_gradients(node, args, kwargs):
    """Autograd's engine checks each gradient a backward node returns against its input's
    device (validate_outputs); here every tensor is on the CPU to it. For a call on
    differentiable tensors of several devices, hooks on the nodes the call made (a composite
    call makes several: the first few found from its result) do that check for the edges that
    lead to the call's own arguments."""
    inputs = [value for value in list(args) + list(kwargs.values())
              if isinstance(value, torch.Tensor) and value.requires_grad]
    if len(inputs) < 2:
        return
    with _disabled_tf():
        devices = [_device_of(tensor) for tensor in inputs]
        if all(device == devices[0] for device in devices):
            return
        sources = [tensor.grad_fn for tensor in inputs]
        waiting, seen = [node], 0
        while waiting and seen < _NODES_WATCHED:
            current = waiting.pop()
            seen += 1
            expected = {}
            for index, (edge, number) in enumerate(current.next_functions):
                if edge is None:
                    continue
                for tensor, source, device in zip(inputs, sources, devices):
                    if (source is None and getattr(edge, "variable", None) is tensor) or (
                            source is not None and edge is source and tensor.output_nr == number):
                        expected[index] = device
                        break
                else:
                    if not hasattr(edge, "variable"):
                        waiting.append(edge)  # a node the call made on the way
            if expected:
                current.register_hook(functools.partial(_check_node_gradients,
                                                        type(current).__name__, expected))


_NODES_WATCHED = 16


def _check_node_gradients(name, expected, grad_inputs, grad_outputs):
    checked = list(grad_inputs)
    for index, device in expected.items():
        grad = grad_inputs[index] if index < len(grad_inputs) else None
        if grad is not None:
            checked[index] = _gradient_on(grad, device, index, name)
    changed = any(new is not old for new, old in zip(checked, grad_inputs))
    return tuple(checked) if changed else None


_DEVICE_GET = torch.Tensor.device.__get__


def _special_functions() -> dict:
    special = {
        _DEVICE_GET: _device_getter,
        torch.Tensor.is_cuda.__get__: _is_type("cuda"),
        torch.Tensor.is_cpu.__get__: _is_type("cpu"),
        torch.Tensor.get_device: _get_device,
        torch.Tensor.type: _type,
        torch.Tensor.to: _to,
        torch.Tensor.cuda: _cuda,
        torch.Tensor.cpu: _cpu,
        torch.Tensor.numpy: _numpy,
        torch.Tensor.__array__: _numpy,
        torch.Tensor.__repr__: _printed,
        torch.Tensor.record_stream: lambda func, args, kwargs: None,
        # Module.to(device="cuda") parses its arguments with it: the device must come back as
        # asked, not as the CPU allocation that a factory's device= is turned into
        torch._C._nn._parse_to: _parse_to_arguments,
        torch._pack_padded_sequence: _host_outputs(1),
        torch._pad_packed_sequence: _host_outputs(1),
        torch.tensor_split: _tensor_split,
        torch.Tensor.tensor_split: _tensor_split,
        torch.lstm: _rnn,
        torch.gru: _rnn,
        torch.rnn_tanh: _rnn,
        torch.rnn_relu: _rnn,
        # (the functional forms reach the mode first, with the same leading arguments)
        torch.batch_norm: _batch_norm,
        torch.nn.functional.batch_norm: _batch_norm,
        torch.instance_norm: _batch_norm,
        torch.nn.functional.instance_norm: _batch_norm,
        torch.rms_norm: _rms_norm,
        torch.nn.functional.rms_norm: _rms_norm,
        torch.ctc_loss: _ctc_loss,
        torch.nn.functional.ctc_loss: _ctc_loss,
        torch.lstm_cell: _fused_rnn_cell("lstm"),
        torch.gru_cell: _fused_rnn_cell("gru"),
    }
    if hasattr(torch.Tensor, "mps"):
        special[torch.Tensor.mps] = _cuda
    if hasattr(torch.Tensor, "is_mps"):
        special[torch.Tensor.is_mps.__get__] = _is_type("mps")
    return special


_SPECIAL = _special_functions()


def _constructors():
    try:
        from torch.utils._device import _device_constructors
        return _device_constructors()
    except ImportError:
        return set()


_CONSTRUCTORS = _constructors()


class _DeviceTranslate(TorchFunctionMode):
    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        special = _SPECIAL.get(func)
        if special is not None:
            return special(func, args, kwargs)
        requested = None
        device = kwargs.get("device")
        if device is not None:
            requested = _parse_device(device)
            if requested.type in KINDS:
                requested = _resolve(requested)
                kwargs = dict(kwargs, device=CPU)
            elif requested.type != "cpu":
                requested = None  # meta etc.: a real device torch handles
        elif func in _CONSTRUCTORS:
            default = _default_device()
            if default is not None and default.type in KINDS:
                requested = _resolve(default)
                kwargs = dict(kwargs, device=CPU)
        generator = kwargs.get("generator")
        if generator is not None and _state is not None:
            target = requested or _first_accelerator(args, kwargs) or (
                _device_of_first_tensor(args)) or (CPU if func in _CONSTRUCTORS else None)
            if target is not None:
                _check_generator(generator, target)
        if requested is None:
            return _plain_call(func, args, kwargs)
        with _frame(requested, None):
            out = func(*args, **kwargs)
            return _settle(out, args, kwargs, requested)


def _device_of_first_tensor(args):
    for value in args:
        if isinstance(value, torch.Tensor):
            return device_of(value)
    return None


def _default_device():
    """The device of torch.set_default_device / ``with torch.device(...)``, or None.

    (torch.get_default_device() itself creates a tensor to learn an index, which would come
    back here.)"""
    from torch.utils import _device
    current = getattr(_device, "CURRENT_DEVICE", None)
    if current is not None:
        return torch.device(current)
    from torch.overrides import _get_current_function_mode_stack
    for mode in reversed(_get_current_function_mode_stack()):
        if isinstance(mode, _device.DeviceContext):
            return mode.device
    return None


def _settle(out, args, kwargs, requested):
    """Make what a call asked for ``device=`` be there.

    A result that is one of the call's inputs from another device is copied
    (``torch.as_tensor(x, device=...)`` returns ``x`` when no copy is needed on the CPU), and
    a fresh result that no aten op tagged (``torch.tensor([...], device=...)`` builds its
    tensor in C++ and only lifts it) is tagged."""
    if not isinstance(out, torch.Tensor):
        return out
    inputs = [value for value in list(args) + list(kwargs.values()) if isinstance(value, torch.Tensor)]
    with _disabled_tf():
        pointer = out.untyped_storage().data_ptr()
        for value in inputs:
            if value.untyped_storage().data_ptr() == pointer and pointer != 0:
                if device_of(value) != requested:
                    return torch.Tensor.clone(out)
                return out
        if device_of(out) != requested and requested.type != "cpu":
            _tag(out, requested)
    return out


# --- torch.cuda, torch.accelerator, torch.backends.mps: a GPU machine -------------------------

class _Properties(types.SimpleNamespace):
    pass


class _Stream:
    """A stream that has nothing to wait for (the pretend GPU computes synchronously)."""

    def __init__(self, device=None, priority=0, **kwargs):
        self.device = _state.device() if _state is not None else CPU
        self.priority = priority

    def synchronize(self):
        return None

    def wait_stream(self, stream):
        return None

    def wait_event(self, event):
        return None

    def record_event(self, event=None):
        return event or _Event()

    def query(self):
        return True

    def is_capturing(self):  # CUDA graphs: never capturing
        return False

    @property
    def device_index(self):
        return self.device.index

    @property
    def device_type(self):
        return self.device.type

    cuda_stream = 0
    stream_id = 0

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


class _Event:
    def __init__(self, enable_timing=False, blocking=False, interprocess=False):
        import time
        self._time = time.perf_counter
        self._at = None

    def record(self, stream=None):
        self._at = self._time()

    def synchronize(self):
        return None

    def wait(self, stream=None):
        return None

    def query(self):
        return True

    def elapsed_time(self, end):
        return ((end._at or 0.0) - (self._at or 0.0)) * 1000.0


def _noop(*args, **kwargs):
    return None


def _count():
    return 0 if _state.cpu_only else _state.count


def _current_device():
    return _state.current


def _set_device(device):
    if isinstance(device, torch.device):
        index = device.index or 0
    elif isinstance(device, str):
        index = torch.device(device).index or 0
    else:
        index = int(device)
    if index >= 0:
        _resolve(torch.device(_state.kind, index))
        _state.current = index


def _exchange_device(device):
    previous = _state.current
    if device is not None and int(device) >= 0:
        _set_device(int(device))
    return previous


def _properties(device=None):
    return _Properties(name="torchdevlint pretend GPU", major=8, minor=0,
                       total_memory=16 * 1024 ** 3, multi_processor_count=108, is_integrated=False,
                       is_multi_gpu_board=False, gcnArchName="", uuid="torchdevlint")


def _cuda_patches() -> dict:
    cuda = torch.cuda
    patches = {
        (cuda, "is_available"): lambda: _state.available() and _state.kind == "cuda",
        # nn.RNN asks before it flattens its weights for cuDNN (which a CPU build lacks)
        (torch.backends.cudnn, "is_acceptable"): lambda tensor: False,
        (cuda, "device_count"): _count,
        (cuda, "current_device"): _current_device,
        (cuda, "set_device"): _set_device,
        (cuda, "_exchange_device"): _exchange_device,
        (cuda, "_maybe_exchange_device"): _exchange_device,
        (cuda, "_lazy_init"): _noop,
        (cuda, "init"): _noop,
        (cuda, "is_initialized"): lambda: True,
        (cuda, "synchronize"): _noop,
        (cuda, "empty_cache"): _noop,
        (cuda, "ipc_collect"): _noop,
        (cuda, "get_device_name"): lambda device=None: _properties().name,
        (cuda, "get_device_capability"): lambda device=None: (8, 0),
        (cuda, "get_device_properties"): _properties,
        (cuda, "is_bf16_supported"): lambda *a, **k: True,
        (cuda, "manual_seed"): _noop,
        (cuda, "manual_seed_all"): _noop,
        (cuda, "seed"): _noop,
        (cuda, "seed_all"): _noop,
        (cuda, "memory_allocated"): lambda device=None: 0,
        (cuda, "max_memory_allocated"): lambda device=None: 0,
        (cuda, "memory_reserved"): lambda device=None: 0,
        (cuda, "max_memory_reserved"): lambda device=None: 0,
        (cuda, "reset_peak_memory_stats"): _noop,
        (cuda, "reset_max_memory_allocated"): _noop,
        (cuda, "mem_get_info"): lambda device=None: (16 * 1024 ** 3, 16 * 1024 ** 3),
        (cuda, "Stream"): _Stream,
        (cuda, "Event"): _Event,
        (cuda, "current_stream"): lambda device=None: _Stream(),
        (cuda, "default_stream"): lambda device=None: _Stream(),
        (cuda, "stream"): lambda stream=None: contextlib.nullcontext(),
        (cuda, "is_current_stream_capturing"): lambda: False,
        # the pretend GPU draws from the CPU's generator
        (cuda, "get_rng_state"): lambda device="cuda": torch.get_rng_state(),
        (cuda, "set_rng_state"): lambda new_state, device="cuda": None,
        (cuda, "get_rng_state_all"): lambda: [torch.get_rng_state() for _ in range(_count())],
        (cuda, "set_rng_state_all"): lambda new_states: None,
    }
    return patches


def _accelerator_patches() -> dict:
    accelerator = getattr(torch, "accelerator", None)
    if accelerator is None:
        return {}
    patches = {}

    def current_accelerator(check_available=False):
        if check_available and not _state.available():
            return None
        return torch.device(_state.kind)

    candidates = {
        "is_available": lambda: _state.available(),
        "device_count": _count,
        "current_accelerator": current_accelerator,
        "current_device_index": _current_device,
        "current_device_idx": _current_device,
        "set_device_index": _set_device,
        "set_device_idx": _set_device,
        "synchronize": _noop,
        "empty_cache": _noop,
        "current_stream": lambda device=None: _Stream(),
    }
    for name, value in candidates.items():
        if hasattr(accelerator, name):
            patches[(accelerator, name)] = value
    return patches


def _group_by_device_and_dtype(tensorlistlist, with_indices=False):
    """torch._C._group_tensors_by_device_and_dtype with the pretend devices: optimizers and
    clip_grad_norm_ move their state (found_inf, grad_scale) to the devices it names."""
    groups = {}
    for index, tensor in enumerate(tensorlistlist[0]):
        key = (device_of(tensor), tensor.dtype)
        lists, indices = groups.setdefault(key, ([[] for _ in tensorlistlist], []))
        for column, tensors in enumerate(tensorlistlist):
            if tensors:  # an empty list (amsgrad's state when off) stays empty
                lists[column].append(tensors[index])
        if with_indices:
            indices.append(index)
    return groups


def _foreach_patches() -> dict:
    if not hasattr(torch._C, "_group_tensors_by_device_and_dtype"):
        return {}
    return {(torch._C, "_group_tensors_by_device_and_dtype"): _group_by_device_and_dtype}


def _parallel_patches() -> dict:
    """nn.DataParallel's scatter and gather are CUDA kernels: here, chunks and copies."""
    from torch.nn.parallel import _functions, comm

    def scatter(tensor, devices, chunk_sizes=None, dim=0, streams=None, *, out=None):
        if out is not None:
            devices = [device_of(item) for item in out]
        if chunk_sizes is None:
            chunks = tensor.chunk(len(devices), dim)
        else:
            chunks = tensor.split(list(chunk_sizes), dim)
        moved = tuple(chunk.to(_as_accelerator(device)) for chunk, device in zip(chunks, devices))
        if out is not None:
            for target, chunk in zip(out, moved):
                target.copy_(chunk)
            return tuple(out)
        return moved

    def gather(tensors, dim=0, destination=None, *, out=None):
        target = CPU if destination == -1 or destination == "cpu" else _as_accelerator(
            0 if destination is None else destination)
        if out is not None:
            target = device_of(out)
        joined = torch.cat([tensor.to(target) for tensor in tensors], dim)
        if out is not None:
            return out.copy_(joined)
        return joined

    def broadcast_coalesced(tensors, devices, buffer_size=10485760):
        return [[tensor.to(_as_accelerator(device)) for tensor in tensors] for device in devices]

    def reduce_add_coalesced(inputs, destination=None, buffer_size=10485760):
        target = _as_accelerator(0 if destination is None else destination)
        return [functools.reduce(lambda a, b: a + b, [item.to(target) for item in group])
                for group in zip(*inputs)]

    return {(comm, "scatter"): scatter, (comm, "gather"): gather,
            (comm, "broadcast_coalesced"): broadcast_coalesced,
            (comm, "reduce_add_coalesced"): reduce_add_coalesced,
            (_functions, "_get_stream"): lambda device: None,
            (torch._C, "_accelerator_exchangeDevice"): _exchange_device,
            (torch._C, "_accelerator_maybeExchangeDevice"): _exchange_device}


def _autograd_patches() -> dict:
    """The backward pass runs user code (a custom ``Function.backward``, hooks, checkpointed
    forwards) from inside ``Tensor.backward`` / ``torch.autograd.grad``, which reach the
    engine while _DeviceTranslate handles them, that is, with it popped off the mode stack:
    without this, ``tensor.device`` would answer ``cpu`` in there."""
    original = getattr(torch.autograd, "_engine_run_backward", None)
    if original is None:
        return {}

    def run_backward(outputs, grads=None, *args, **kwargs):
        if grads is not None:
            grads = _checked_gradients(outputs, grads)
        translate = _modes[0] if _modes else None
        if translate is None or _translate_on_stack(translate):
            return original(outputs, grads, *args, **kwargs)
        with translate:
            return original(outputs, grads, *args, **kwargs)
    return {(torch.autograd, "_engine_run_backward"): run_backward}


def _checked_gradients(outputs, grads):
    """The engine's check of the gradients it starts from (validate_outputs in
    torch/csrc/autograd/engine.cpp): each on its output's device, but for a 0-dim one, which
    it moves there."""
    checked = []
    for index, (output, grad) in enumerate(zip(outputs, grads)):
        if isinstance(output, torch.Tensor) and isinstance(grad, torch.Tensor):
            grad = _gradient_on(grad, device_of(output), index, "")
        checked.append(grad)
    return type(grads)(checked) if isinstance(grads, (tuple, list)) else grads


def _gradient_on(grad, device, index, node_name):
    """validate_outputs: a gradient on another device than its input is an error, but for a
    0-dim one, which is moved there."""
    found = device_of(grad)
    if found == device:
        return grad
    if grad.dim() != 0:
        prefix = f"Function {node_name} returned an " if node_name else ""
        raise RuntimeError(f"{prefix}invalid gradient at index {index} - expected device {device} "
                           f"but got {found}")
    return _copy_to(grad, device)


def _translate_on_stack(mode) -> bool:
    from torch.overrides import _get_current_function_mode_stack
    return any(item is mode for item in _get_current_function_mode_stack())


def _as_accelerator(device) -> torch.device:
    if isinstance(device, torch.device):
        return device if device.type != "cpu" else device
    if isinstance(device, str):
        return torch.device(device)
    return _state.device(int(device))


def _mps_patches() -> dict:
    patches = {(torch.backends.mps, "is_available"): lambda: _state.available() and _state.kind == "mps",
               (torch.backends.mps, "is_built"): lambda: True}
    mps = getattr(torch, "mps", None)
    if mps is not None:
        for name in ("synchronize", "empty_cache", "manual_seed", "seed"):
            if hasattr(mps, name):
                patches[(mps, name)] = _noop
        if hasattr(mps, "device_count"):
            patches[(mps, "device_count")] = _count
        if hasattr(mps, "is_available"):
            patches[(mps, "is_available")] = lambda: _state.available()
    return patches


def _pin_memory(self, *args, **kwargs):
    device = device_of(self)
    if device.type != "cpu":
        raise RuntimeError(f"cannot pin '{_type_name(self, device)}' only dense CPU tensors can be pinned")
    with _disabled_tf():
        copy = _ORIGINAL_CLONE(self)
        setattr(copy.untyped_storage(), _PINNED, True)
    return copy


def _is_pinned(self, *args, **kwargs):
    with _disabled_tf():
        return bool(getattr(self.untyped_storage(), _PINNED, False))


_ORIGINAL_CLONE = torch.Tensor.clone


def _tensor_patches() -> dict:
    patches = {(torch.Tensor, "pin_memory"): _pin_memory, (torch.Tensor, "is_pinned"): _is_pinned,
               (torch, "Generator"): _Generator}
    for name in _LEGACY_TYPE_NAMES:
        if hasattr(torch.cuda, name):
            patches[(torch.cuda, name)] = _legacy_cuda_type(name)
    return patches


# The legacy tensor types (``torch.FloatTensor``, ...): the CPU ones, as torch defines them
# before anything is patched, and their names.
_LEGACY_CPU_TYPES = types.SimpleNamespace(**{
    name: getattr(torch, name) for name in """FloatTensor DoubleTensor HalfTensor BFloat16Tensor
    LongTensor IntTensor ShortTensor CharTensor ByteTensor BoolTensor""".split()
    if hasattr(torch, name)})
_LEGACY_TYPE_NAMES = tuple(vars(_LEGACY_CPU_TYPES))


class _LegacyCudaType(type):
    """``torch.cuda.FloatTensor`` on the pretend GPU: calling it makes a tensor there as
    ``torch.FloatTensor(...)`` makes one on the CPU (sizes, or data); ``isinstance`` asks for
    its dtype on the pretend GPU. A CPU build has none to give ("type torch.cuda.FloatTensor
    not available")."""

    def __call__(cls, *args, **kwargs):
        if _state is None or _state.kind != "cuda":
            raise _not_compiled("cuda")
        made = getattr(_LEGACY_CPU_TYPES, cls.__name__)(*args, **kwargs)
        return _copy_to(made, _resolve(torch.device("cuda")))

    def __instancecheck__(cls, instance):
        return isinstance(instance, torch.Tensor) and \
            instance.dtype == getattr(_LEGACY_CPU_TYPES, cls.__name__).dtype and \
            device_of(instance).type == "cuda"


def _legacy_cuda_type(name: str):
    cls = _LegacyCudaType(name, (), {"__module__": "torch.cuda"})
    cls.dtype = getattr(_LEGACY_CPU_TYPES, name).dtype
    cls.is_cuda = True
    return cls


_ORIGINAL_GENERATOR = torch.Generator


class _GeneratorType(type(torch.Generator)):
    """Generators made before the pretend accelerator started (``torch.default_generator``)
    stay instances of ``torch.Generator`` while it is patched."""

    def __instancecheck__(cls, instance):
        return isinstance(instance, _ORIGINAL_GENERATOR)

    def __subclasscheck__(cls, subclass):
        return issubclass(subclass, _ORIGINAL_GENERATOR)


class _Generator(torch.Generator, metaclass=_GeneratorType):
    """``torch.Generator("cuda")``: a CPU generator that says it is on the pretend device (a
    CPU build has no CUDA generator to give)."""

    def __new__(cls, device="cpu"):
        return super().__new__(cls, "cpu")

    def __init__(self, device="cpu"):
        parsed = _parse_device(device)
        if parsed is not None and parsed.type in KINDS:
            if _state is None or parsed.type != _state.kind:
                raise _not_compiled(parsed.type)
            parsed = _resolve(parsed)
        self._torchdevlint_device = parsed or CPU

    @property
    def device(self):
        return self._torchdevlint_device


def _generator_device(generator) -> torch.device:
    return getattr(generator, "_torchdevlint_device", None) or generator.device


def _check_generator(generator, target) -> None:
    """A GPU kernel refuses a generator of another device type (check_generator)."""
    found = _generator_device(generator)
    if found.type != target.type:
        raise RuntimeError(f"Expected a '{target.type}' device type for generator but found "
                           f"'{found.type}'")


def _amp_patches() -> dict:
    """``torch.autocast("cuda")`` and ``GradScaler("cuda")`` ask whether AMP can run."""
    patches = {}
    common = getattr(getattr(torch.cuda, "amp", None), "common", None)
    if common is not None and hasattr(common, "amp_definitely_not_available"):
        patches[(common, "amp_definitely_not_available")] = lambda: not _state.available()
    autocast = getattr(getattr(torch.amp, "autocast_mode", None), "autocast", None)
    if autocast is not None and hasattr(torch, "set_autocast_dtype"):
        enter, exit_ = autocast.__enter__, autocast.__exit__

        def autocast_enter(self):
            result = enter(self)
            if _state is not None and getattr(self, "device", None) == _state.kind:
                self._torchdevlint_cpu = (torch.is_autocast_enabled("cpu"),
                                          torch.get_autocast_dtype("cpu"))
                torch.set_autocast_enabled("cpu", self._enabled)
                torch.set_autocast_dtype("cpu", self.fast_dtype)
            return result

        def autocast_exit(self, *exc):
            result = exit_(self, *exc)
            previous = self.__dict__.pop("_torchdevlint_cpu", None)
            if previous is not None:
                torch.set_autocast_enabled("cpu", previous[0])
                torch.set_autocast_dtype("cpu", previous[1])
            return result
        patches[(autocast, "__enter__")] = autocast_enter
        patches[(autocast, "__exit__")] = autocast_exit
    return patches


def _accelerator_autocast():
    """The dtype of ``autocast("cuda")`` while it runs as CPU autocast, else None."""
    if _state is None or not torch.is_autocast_enabled(_state.kind) \
            or not torch.is_autocast_enabled("cpu"):
        return None
    return torch.get_autocast_dtype("cpu")


# --- checkpoints: the device travels in the file, as a GPU's torch.save writes it -------------

def _location_tag(storage):
    if _state is None:
        return None
    untyped = getattr(storage, "_untyped_storage", storage)
    device = getattr(untyped, _TAG, None)
    if device is None:
        return None
    return str(device) if device.type != "mps" else "mps"


def _restore(storage, location):
    state = _state
    if state is None or not (location == state.kind or location.startswith(state.kind + ":")):
        return None
    validate = getattr(torch.serialization, "_validate_device", None)
    if validate is not None and state.kind == "cuda":
        device = validate(location, state.kind)  # the messages of a machine without it
    else:
        if state.cpu_only:
            raise RuntimeError(f"Attempting to deserialize object on a {state.kind.upper()} device "
                               f"but torch.{state.kind}.is_available() is False. If you are running "
                               "on a CPU-only machine, please use torch.load with "
                               "map_location=torch.device('cpu') to map your storages to the CPU.")
        device = state.device(None if location == state.kind else int(location.split(":")[1]))
    untyped = getattr(storage, "_untyped_storage", storage)
    setattr(untyped, _TAG, torch.device(state.kind, device.index or 0)
            if state.kind != "mps" else torch.device("mps", 0))
    return storage


_registered = False


def _register_serialization():
    global _registered
    if not _registered:
        torch.serialization.register_package(1, _location_tag, _restore)
        _registered = True


# --- activation ---------------------------------------------------------------------------

_lock = threading.RLock()
_depth = 0
_saved = {}
_modes = []


def _fresh(function):
    """A function object of its own for each patched name (torch._dynamo, imported lazily,
    refuses one object under two names)."""
    if isinstance(function, type):
        return function

    def patched(*args, **kwargs):
        return function(*args, **kwargs)
    patched.__name__ = getattr(function, "__name__", "patched")
    return patched


def _all_patches() -> dict:
    patches = {}
    for group in (_cuda_patches, _accelerator_patches, _mps_patches, _amp_patches,
                  _parallel_patches, _foreach_patches, _autograd_patches):
        patches.update(group())
    patches = {key: _fresh(value) for key, value in patches.items() if hasattr(key[0], key[1])}
    patches.update(_tensor_patches())
    return patches


def _activate(kind: str, count: int):
    global _state, _depth
    with _lock:
        if _depth:
            if (_state.kind, _state.count) != (kind, count):
                raise RuntimeError(f"a pretend {_state.kind} (count {_state.count}) is already "
                                   f"active; it cannot become {kind} (count {count})")
            _depth += 1
            return
        _register_serialization()
        _state = _State(kind, count)
        for (owner, name), value in _all_patches().items():
            _saved[(owner, name)] = owner.__dict__.get(name, _MISSING) if isinstance(owner, type) \
                else getattr(owner, name, _MISSING)
            setattr(owner, name, value)
        translate, check = _DeviceTranslate(), _DeviceCheck()
        translate.__enter__()
        check.__enter__()
        _modes[:] = [translate, check]
        _depth = 1


_MISSING = object()


def _deactivate():
    global _state, _depth
    with _lock:
        _depth -= 1
        if _depth:
            return
        translate, check = _modes
        check.__exit__(None, None, None)
        translate.__exit__(None, None, None)
        _modes.clear()
        for (owner, name), value in _saved.items():
            if value is _MISSING:
                delattr(owner, name)
            else:
                setattr(owner, name, value)
        _saved.clear()
        _state = None


class fake_accelerator(contextlib.ContextDecorator):
    """Run the enclosed code as on a machine with ``count`` accelerators of ``kind``
    (``"cuda"`` or ``"mps"``); usable as ``with`` and as a decorator."""

    def __init__(self, kind: str = "cuda", count: int = 1):
        if kind not in KINDS:
            raise ValueError(f"kind must be one of {', '.join(KINDS)}, not {kind!r}")
        if kind == "mps":
            count = 1
        if count < 1:
            raise ValueError(f"count must be at least 1, not {count}")
        self.kind, self.count = kind, count

    def __enter__(self):
        _activate(self.kind, self.count)
        return self

    def __exit__(self, *exc):
        _deactivate()
        return False


@contextlib.contextmanager
def cpu_only():
    """Inside an active pretend accelerator: a phase in which the machine has none (as a
    CPU-only user's machine): ``is_available()`` is false, ``device_count()`` is 0, moving a
    tensor there fails and a GPU checkpoint needs ``map_location``."""
    if _state is None:
        raise RuntimeError("cpu_only() needs an active fake_accelerator()")
    previous = _state.cpu_only
    _state.cpu_only = True
    try:
        yield
    finally:
        _state.cpu_only = previous


def current_setting():
    """(kind, count) of the active pretend accelerator, or None."""
    return None if _state is None else (_state.kind, _state.count)


@contextlib.contextmanager
def suspended():
    """Switch the pretend accelerator off for a while (a test marked enabled=False)."""
    global _depth
    if _state is None:
        yield
        return
    setting, depth = current_setting(), _depth
    _depth = 1
    _deactivate()
    try:
        yield
    finally:
        _activate(*setting)
        _depth = depth


@contextlib.contextmanager
def replaced(kind: str, count: int):
    """Another pretend accelerator for a while (a test marked with another kind or count)."""
    with suspended(), fake_accelerator(kind, count):
        yield
