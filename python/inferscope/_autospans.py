"""Automatic spans: library entry points wrapped so that, while a scope is
open on the calling thread, their calls become spans (tokenize, forward,
generate, encode, transform, h2d/d2h).

Outside a scope a wrapper costs one thread-local lookup. A wrapper does not
open a span inside a span of a kind it suppresses, so only the outermost
nn.Module call is a `forward`, and the tokenizer calls nested inside
`tokenizer.__call__` are not spans of their own. Copies are spans only in
the user's own code: inside a library span (forward, generate, encode,
tokenize, transform) a .to() is the library's business, the collector
sees its memcpy anyway, and classifying each call cost ~2 µs (on the H100,
sentence-transformers' encode makes ~108 .to() calls per batch, gpt2's
generate ~93: +3.5 % on the embedding scenario).

Every nn.Module call in a model goes through the Module.__call__ wrapper,
so its pass-through path is the hot one (on the H100 the spans cost +3–4.5 %
on the seed scenarios while it added a frame to each call): it stands in
for torch's own `_wrapped_call_impl` layer instead of calling it.
"""
import functools

from . import _hooks
from ._scope import _tls, jname, pop, push

_MISSING = object()
_patched = []  # (owner, attr, what owner.__dict__ held before, or _MISSING)
_hooked = []  # callbacks registered with _hooks, to cancel on uninstall
_installed = False
_names = {}  # (class, suffix) -> JSON name

_COPY_SUPPRESS = ("h2d", "d2h", "forward", "transform", "generate", "encode", "tokenize")  # copies: user code only
SUPPRESS = {  # kind -> the kinds of enclosing span under which it is not a span of its own
    "tokenize": ("tokenize",),
    "forward": ("forward", "transform"),  # nn.Modules inside a transform are the transform
    "transform": ("transform",),
    "generate": ("generate",),
    "encode": ("encode",),
    "h2d": _COPY_SUPPRESS,
    "d2h": _COPY_SUPPRESS,
}


def install():
    """Patch what is imported now and, via import hooks, what is imported later."""
    global _installed
    if _installed:
        return
    _installed = True
    for name, cb in (
        ("torch", _patch_torch),
        ("transformers.tokenization_utils_base", _patch_tokenizer),
        ("transformers.generation.utils", _patch_generate),
        ("sentence_transformers.sentence_transformer.model", _patch_sentence_transformers),  # >= 5
        ("sentence_transformers.SentenceTransformer", _patch_sentence_transformers),  # older
        ("torchvision.transforms.transforms", _patch_torchvision),
    ):
        _hooked.append(cb)
        _hooks.on_import(name, cb)


def uninstall():
    """Restore every patched attribute; safe to call when nothing is patched."""
    global _installed
    for cb in _hooked:
        _hooks.cancel(cb)
    del _hooked[:]
    while _patched:
        owner, attr, before = _patched.pop()
        if before is _MISSING:
            delattr(owner, attr)
        else:
            setattr(owner, attr, before)
    _names.clear()
    _installed = False


def installed():
    return _installed


def _patch(owner, attr, make):
    before = owner.__dict__.get(attr, _MISSING)
    if getattr(before, "_inferscope_orig", None) is not None:
        return  # already ours
    orig = getattr(owner, attr, None)
    if orig is None:
        return  # not in this library version
    wrapper = make(orig)
    try:
        functools.update_wrapper(wrapper, orig)
    except (AttributeError, TypeError):
        pass
    wrapper._inferscope_orig = orig
    # torch.compile traces this instead of the wrapper: the spans' clock reads
    # would otherwise break graphs, and the stack's state would be guarded on.
    wrapper._torchdynamo_inline = orig
    setattr(owner, attr, wrapper)
    _patched.append((owner, attr, before))


def _class_name(cls, suffix):
    key = (cls, suffix)
    j = _names.get(key)
    if j is None:
        j = _names[key] = jname(cls.__name__ + suffix)
    return j


def _method(kind, label):
    """Wrapper factory; label is a span name, or ".x" for "<Class>.x"."""
    suppress = SUPPRESS[kind]
    fixed = None if label.startswith(".") else jname(label)

    def make(orig):
        def wrapper(self, *args, **kwargs):
            st = _tls.stack
            if not st or st[-1][3] in suppress:
                return orig(self, *args, **kwargs)
            return _in_span(st, fixed or _class_name(type(self), label), kind, orig, self, args, kwargs)

        return wrapper

    return make


# --- torch -----------------------------------------------------------------

_module_spans = {}  # nn.Module subclass -> (JSON name, kind)


def _module_span(cls):
    k = _module_spans.get(cls)
    if k is None:
        # torchvision's tensor transforms (Normalize, Resize, v2.*) are nn.Modules.
        if (cls.__module__ or "").startswith("torchvision.transforms"):
            k = (_class_name(cls, ".__call__"), "transform")
        else:
            k = (_class_name(cls, ".forward"), "forward")
        _module_spans[cls] = k
    return k


def _is_torch_wrapped_call_impl(f):
    """Whether f is torch's Module.__call__ (`_wrapped_call_impl`, torch >= 2.1:
    `_compiled_call_impl` if set, else `_call_impl`), which the wrapper's
    pass-through path may then do itself."""
    code = getattr(f, "__code__", None)
    return (getattr(f, "__name__", "") == "_wrapped_call_impl" and code is not None
            and code.co_filename.replace("\\", "/").endswith("torch/nn/modules/module.py")
            and "_compiled_call_impl" in code.co_names and "_call_impl" in code.co_names)


def _module_call(orig):
    suppress = SUPPRESS["forward"]
    if _is_torch_wrapped_call_impl(orig):
        def __call__(self, *args, **kwargs):
            st = _tls.stack
            # Every submodule call pays only this: the outermost call is the span.
            if not st or st[-1][3] in suppress:
                cc = self._compiled_call_impl
                if cc is not None:
                    return cc(*args, **kwargs)
                return self._call_impl(*args, **kwargs)
            return _in_span(st, *_module_span(type(self)), orig, self, args, kwargs)
    else:
        def __call__(self, *args, **kwargs):
            st = _tls.stack
            if not st or st[-1][3] in suppress:
                return orig(self, *args, **kwargs)
            return _in_span(st, *_module_span(type(self)), orig, self, args, kwargs)

    return __call__


def _in_span(st, name, kind, call, self, args, kwargs):
    """call(self, *args, **kwargs) as an automatic span of this kind."""
    fr = push(st, name, kind)
    try:
        out = call(self, *args, **kwargs)
    except BaseException as e:
        pop(st, fr, type(e))
        raise
    pop(st, fr, None)
    return out


_dev_types = {}  # "cuda:1" -> "cuda"


def move_kind(src_is_cpu, dst):
    """h2d / d2h / None for a copy from a tensor (on CPU or not) to device type dst."""
    if dst is None or dst == "meta":
        return None
    if src_is_cpu:
        return None if dst == "cpu" else "h2d"
    return "d2h" if dst == "cpu" else None


def _to_target(torch):
    Device, Tensor = torch.device, torch.Tensor

    def target(args, kwargs):
        """Device type a Tensor.to(...) call moves to; None for dtype-only calls."""
        d = kwargs.get("device") if kwargs else None
        if d is None:
            if not args:
                return None
            d = args[0]
        if isinstance(d, str):
            t = _dev_types.get(d)
            if t is None:
                t = _dev_types[d] = d.split(":", 1)[0]
            return t
        if isinstance(d, Device):
            return d.type
        if isinstance(d, Tensor):
            return d.device.type
        if isinstance(d, int) and not isinstance(d, bool):
            return "cuda"  # a bare ordinal means a CUDA device
        return None

    return target


def _copy(name, kind_of):
    """Tensor.to/.cuda/.cpu wrapper; kind_of(tensor, args, kwargs) -> h2d/d2h/None."""
    jn = jname(name)
    suppress = SUPPRESS["h2d"]

    def make(orig):
        def wrapper(self, *args, **kwargs):
            st = _tls.stack
            if not st or st[-1][3] in suppress:
                return orig(self, *args, **kwargs)
            kind = kind_of(self, args, kwargs)
            if kind is None:
                return orig(self, *args, **kwargs)
            return _in_span(st, jn, kind, orig, self, args, kwargs)

        return wrapper

    return make


def _patch_torch(torch):
    _patch(torch.nn.Module, "__call__", _module_call)
    target = _to_target(torch)
    _patch(torch.Tensor, "to", _copy("Tensor.to", lambda t, a, k: move_kind(t.is_cpu, target(a, k))))
    _patch(torch.Tensor, "cuda", _copy("Tensor.cuda", lambda t, a, k: "h2d" if t.is_cpu else None))
    _patch(torch.Tensor, "cpu", _copy("Tensor.cpu", lambda t, a, k: None if t.is_cpu or t.is_meta else "d2h"))


# --- libraries -------------------------------------------------------------


def _patch_tokenizer(mod):
    cls = mod.PreTrainedTokenizerBase
    for attr in ("__call__", "encode", "batch_encode_plus", "decode", "batch_decode"):
        _patch(cls, attr, _method("tokenize", "tokenizer." + attr))


def _patch_generate(mod):
    _patch(mod.GenerationMixin, "generate", _method("generate", ".generate"))


def _patch_sentence_transformers(mod):
    cls = getattr(mod, "SentenceTransformer", None)
    if not isinstance(cls, type):
        return
    _patch(cls, "encode", _method("encode", "SentenceTransformer.encode"))
    # `preprocess` replaced `tokenize` in sentence-transformers 5; both tokenize.
    for attr in ("tokenize", "preprocess"):
        _patch(cls, attr, _method("tokenize", "SentenceTransformer." + attr))


def _patch_torchvision(mod):
    import torch

    for cls in list(vars(mod).values()):
        # nn.Module transforms go through Module.__call__ (see _module_span).
        if isinstance(cls, type) and "__call__" in cls.__dict__ and not issubclass(cls, torch.nn.Module):
            _patch(cls, "__call__", _method("transform", ".__call__"))
