"""Run a callback once a module has finished importing, without importing it
ourselves: patches follow the workload's imports instead of forcing them."""
import sys
import threading

_waiting = {}  # module name -> [callback]
_lock = threading.RLock()


def on_import(name, callback):
    """callback(module) now if `name` is imported, else right after it is."""
    mod = sys.modules.get(name)
    if mod is not None and not _initializing(mod):
        _call(callback, mod)
        return
    with _lock:
        _waiting.setdefault(name, []).append(callback)
        if _finder not in sys.meta_path:
            sys.meta_path.insert(0, _finder)


def cancel(callback):
    with _lock:
        for name, cbs in list(_waiting.items()):
            if callback in cbs:
                cbs.remove(callback)
            if not cbs:
                del _waiting[name]


def _initializing(mod):
    spec = getattr(mod, "__spec__", None)
    return bool(getattr(spec, "_initializing", False))


def _call(callback, mod):
    try:
        callback(mod)
    except Exception as e:  # a patch that no longer fits a library version must not break the import
        sys.stderr.write("inferscope: hook for %s failed: %r\n" % (mod.__name__, e))


class _Finder:
    """Finds nothing itself; wraps the loader the other finders return."""

    def find_spec(self, name, path=None, target=None):
        if name not in _waiting:
            return None
        for finder in sys.meta_path:
            if finder is self or not hasattr(finder, "find_spec"):
                continue
            spec = finder.find_spec(name, path, target)
            if spec is not None:
                break
        else:
            return None
        loader = spec.loader
        if loader is None or not hasattr(loader, "exec_module"):
            return spec
        orig = loader.exec_module

        def exec_module(module):
            orig(module)
            with _lock:
                cbs = _waiting.pop(name, ())
            for cb in cbs:
                _call(cb, module)

        try:
            # An attribute on this spec's own loader instance: the loader's
            # class (and isinstance checks on it) stay as they were.
            loader.exec_module = exec_module
        except AttributeError:
            return spec
        return spec


_finder = _Finder()
