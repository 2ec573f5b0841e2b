"""InferScope's Python side: `scope()` spans, automatic spans and the
torch.profiler collector, written for the `inferscope` binary to read
(docs/raw-stream.md). Inert unless INFERSCOPE_RAW_DIR is set."""
from ._boot import _autostart
from ._scope import scope

__all__ = ["scope"]
__version__ = "0.1.0"

# Also covers a pip-installed package used without the binary's sitecustomize.
_autostart()
