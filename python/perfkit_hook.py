"""perfkit's hook inside a traced Python program (see sitecustomize.py).

What it does, each only when `perfkit run` asked for it (the environment
says which):

- PERFKIT_PYTORCH=modules: once `torch` is imported, PyTorch's global module
  hooks time every nn.Module's forward, autograd's hooks its backward, and
  the optimizer hooks every optimizer step. Each becomes a range in
  perfkit's own NVTX domain, named by the module's qualified name in its
  model and its class ("transformer.h.0.attn (GPT2Attention)").
- PERFKIT_PYTHON_SAMPLING / PERFKIT_PYTHON_BACKTRACE: the collector reads
  Python's frames itself, from its own thread; here it is only shown where
  they are (calibration), once, with the GIL held.

The collector is the library CUDA loads for perfkit (CUDA_INJECTION64_PATH);
loading it here first is the same library, which CUDA then starts.
"""
import ctypes
import os
import sys
import threading
import types

FORWARD, BACKWARD, OPTIMIZER = 1, 2, 3  # NVTX categories (prof/event.h)

_lib = None
_warned = set()


def _warn(what, exc):
    if what not in _warned:
        _warned.add(what)
        sys.stderr.write("perfkit: %s is off: %s\n" % (what, exc))


def _library():
    global _lib
    if _lib is None:
        lib = ctypes.CDLL(os.environ["CUDA_INJECTION64_PATH"])
        lib.perfkit_py_now.restype = ctypes.c_int64
        lib.perfkit_py_now.argtypes = []
        lib.perfkit_py_name.restype = ctypes.c_int32
        lib.perfkit_py_name.argtypes = [ctypes.c_char_p]
        lib.perfkit_py_range.restype = None
        lib.perfkit_py_range.argtypes = [ctypes.c_int32, ctypes.c_int64, ctypes.c_int32,
                                         ctypes.c_int64]
        lib.perfkit_py_calibrate.restype = ctypes.c_int
        _lib = lib
    return _lib


# ---- where Python keeps its frames (collectors/python_runtime.c) ------------

class _Calibration(ctypes.Structure):
    _fields_ = [(n, ctypes.c_uint64) for n in (
        "hexversion", "interp", "tstate", "tstate_head", "native_tid", "code", "code_type",
        "filename", "name", "qualname", "linetable")] + [
        ("firstlineno", ctypes.c_int64), ("code_basicsize", ctypes.c_int64),
        ("str_type", ctypes.c_uint64), ("bytes_type", ctypes.c_uint64),
        ("gil_held", ctypes.c_uint64)]


class _Frames:
    @staticmethod
    def calibrate(lib):
        # A method, so that its qualified name ("_Frames.calibrate") is not
        # the same object as its name: the collector tells them apart by id.
        api = ctypes.pythonapi
        api.PyThreadState_Get.restype = ctypes.c_void_p
        api.PyInterpreterState_Get.restype = ctypes.c_void_p
        api.PyInterpreterState_ThreadHead.restype = ctypes.c_void_p
        api.PyInterpreterState_ThreadHead.argtypes = [ctypes.c_void_p]
        code = _Frames.calibrate.__code__
        interp = api.PyInterpreterState_Get()
        c = _Calibration(
            hexversion=sys.hexversion, interp=interp, tstate=api.PyThreadState_Get(),
            tstate_head=api.PyInterpreterState_ThreadHead(interp),
            native_tid=threading.get_native_id(), code=id(code), code_type=id(types.CodeType),
            filename=id(code.co_filename), name=id(code.co_name),
            qualname=id(code.co_qualname), linetable=id(code.co_linetable),
            firstlineno=code.co_firstlineno, code_basicsize=types.CodeType.__basicsize__,
            str_type=id(str), bytes_type=id(bytes), gil_held=1)
        # through PyDLL, which keeps the GIL during the call: the collector
        # finds the GIL as the lock this thread holds
        calibrate = ctypes.PyDLL(lib._name).perfkit_py_calibrate
        calibrate.restype = ctypes.c_int
        calibrate.argtypes = [ctypes.POINTER(_Calibration)]
        return calibrate(ctypes.byref(c))


# ---- nn.Module, autograd and optimizer ranges ------------------------------

class _Modules:
    def __init__(self, torch, lib):
        import weakref

        self.torch = torch
        self.lib = lib
        self.now = lib.perfkit_py_now
        self.range = lib.perfkit_py_range
        self.names = weakref.WeakKeyDictionary()  # module -> its name's index
        self.local = threading.local()
        self.backward_ok = True

    def name_of(self, module):
        idx = self.names.get(module)
        if idx is None:
            # Not seen inside a named model: it is a root. Name it and all
            # it holds by their place in it, as named_modules() says.
            root = type(module).__name__
            for qual, sub in module.named_modules(remove_duplicate=False):
                if sub not in self.names:
                    label = "%s (%s)" % (qual, type(sub).__name__) if qual else \
                        "%s (%s)" % (root, root)
                    self.names[sub] = self.lib.perfkit_py_name(label.encode("utf-8", "replace"))
            idx = self.names[module]
        return idx

    def starts(self):
        s = getattr(self.local, "starts", None)
        if s is None:
            s = self.local.starts = []
        return s

    def forward_pre(self, module, args):
        # Named here, not when it returns: the outermost module's forward
        # starts first and names everything it holds by its place in it.
        self.starts().append((self.name_of(module), self.now()))

    def forward_post(self, module, args, output):
        s = self.starts()
        if not s:
            return
        name, start = s.pop()
        self.range(name, start, FORWARD, threading.get_native_id())
        if self.backward_ok and self.torch.is_grad_enabled():
            try:
                self.mark_backward(module, name, args, output)
            except Exception as exc:  # an output autograd will not hook
                self.backward_ok = False
                _warn("marking modules' backward", exc)

    def tensors(self, value, out, depth=0):
        torch = self.torch
        if isinstance(value, torch.Tensor):
            out.append(value)
        elif depth < 3 and isinstance(value, (list, tuple)):
            for v in value:
                self.tensors(v, out, depth + 1)
        elif depth < 3 and isinstance(value, dict):
            for v in value.values():
                self.tensors(v, out, depth + 1)
        return out

    def mark_backward(self, module, name, args, output):
        """The module's backward: from the first gradient reaching one of
        its outputs to the first gradient of one of its inputs; where no
        input needs a gradient (a model's first modules, the model itself),
        to the end of the backward pass, which is where theirs end."""
        outs = [t for t in self.tensors(output, []) if t.grad_fn is not None]
        if not outs:
            return
        ends = [t for t in self.tensors(args, []) if t.requires_grad]
        state = {"start": None, "tid": 0}
        rng, now = self.range, self.now
        engine = self.torch.autograd.Variable._execution_engine

        def end(*unused):
            if state["start"] is not None:
                rng(name, state["start"], BACKWARD, state["tid"])
                state["start"] = None

        def begin(grad_outputs):
            if state["start"] is None:
                state["start"] = now()
                state["tid"] = threading.get_native_id()
                if not ends:
                    engine.queue_callback(end)

        seen = set()
        for t in outs:
            if id(t.grad_fn) not in seen:
                seen.add(id(t.grad_fn))
                t.grad_fn.register_prehook(begin)
        # Hooks on the inputs' gradients (activations: they go with the
        # graph after backward). The first one computed ends the range:
        # a multi-gradient hook would wait for all, at several times the
        # cost of registering one hook a tensor, paid at every forward.
        for t in ends:
            t.register_hook(end)

    def optimizer_starts(self):
        s = getattr(self.local, "optimizer_starts", None)
        if s is None:
            s = self.local.optimizer_starts = []
        return s

    def optimizer_pre(self, optimizer, args, kwargs):
        self.optimizer_starts().append(self.now())

    def optimizer_post(self, optimizer, args, kwargs):
        s = self.optimizer_starts()
        if not s:
            return
        cls = type(optimizer).__name__
        name = self.lib.perfkit_py_name(("%s.step (%s)" % (cls, cls)).encode())
        self.range(name, s.pop(), OPTIMIZER, threading.get_native_id())

    def install(self):
        torch = self.torch
        mm = torch.nn.modules.module
        mm.register_module_forward_pre_hook(self.forward_pre)
        try:
            mm.register_module_forward_hook(self.forward_post, always_call=True)
        except TypeError:  # before always_call: an exception skips the post hook
            mm.register_module_forward_hook(self.forward_post)
        try:
            from torch.optim.optimizer import (register_optimizer_step_post_hook,
                                               register_optimizer_step_pre_hook)
            register_optimizer_step_pre_hook(self.optimizer_pre)
            register_optimizer_step_post_hook(self.optimizer_post)
        except ImportError as exc:
            _warn("marking optimizer steps", exc)


def _on_torch(torch):
    try:
        _Modules(torch, _library()).install()
    except Exception as exc:
        _warn("marking PyTorch modules", exc)


class _TorchWatcher:
    """Runs _on_torch once `torch` has been imported, wherever from."""

    def find_spec(self, name, path=None, target=None):
        if name != "torch":
            return None
        import importlib.util

        sys.meta_path.remove(self)
        spec = importlib.util.find_spec("torch")
        if spec is None or spec.loader is None or not hasattr(spec.loader, "exec_module"):
            return spec
        loader_exec = spec.loader.exec_module

        def exec_module(module):
            loader_exec(module)
            _on_torch(module)

        spec.loader.exec_module = exec_module
        return spec


def install():
    if os.environ.get("PERFKIT_PYTHON_SAMPLING") or os.environ.get("PERFKIT_PYTHON_BACKTRACE"):
        try:
            _Frames.calibrate(_library())
        except Exception as exc:
            _warn("recording Python stacks", exc)
    if os.environ.get("PERFKIT_PYTORCH") == "modules":
        if "torch" in sys.modules:
            _on_torch(sys.modules["torch"])
        else:
            sys.meta_path.insert(0, _TorchWatcher())
