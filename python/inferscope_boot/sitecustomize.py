"""Started by `inferscope run` (this directory is on PYTHONPATH): turns
recording on before the workload's first line runs."""
import os
import sys


def _chain():
    # Python imports only the first sitecustomize on sys.path, and ours
    # shadows the one a virtualenv or distro may ship: run that one too.
    import importlib.machinery
    import importlib.util

    here = os.path.dirname(os.path.abspath(__file__))
    rest = [p for p in sys.path if os.path.abspath(p or os.curdir) != here]
    spec = importlib.machinery.PathFinder.find_spec("sitecustomize", rest)
    if spec is None or spec.loader is None:
        return
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)


def _start():
    # The package beside this directory (the tree `inferscope run` extracts)
    # wins over any installed copy, so the binary and its Python side match.
    import importlib.util

    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    init = os.path.join(here, "inferscope", "__init__.py")
    if "inferscope" not in sys.modules and os.path.exists(init):
        spec = importlib.util.spec_from_file_location("inferscope", init,
                                                      submodule_search_locations=[os.path.dirname(init)])
        mod = importlib.util.module_from_spec(spec)
        sys.modules["inferscope"] = mod
        try:
            spec.loader.exec_module(mod)
        except BaseException:
            del sys.modules["inferscope"]
            raise
    import inferscope

    inferscope._autostart()


# Start first so that imports made by a chained sitecustomize are seen too.
try:
    _start()
except Exception as e:
    sys.stderr.write("inferscope: not recording: %r\n" % (e,))
try:
    _chain()
except Exception as e:  # someone else's sitecustomize must not stop us, nor we it
    sys.stderr.write("inferscope: chained sitecustomize failed: %r\n" % (e,))
