"""NervaPack Core: a local, offline context engine for a codebase and its decisions.

The public API is small and re-exported here; everything else is internal.
"""

__version__ = "0.1.0"

__all__ = ["__version__", "Workspace", "find_workspace", "count_tokens"]

from .tokens import count_tokens
from .workspace import Workspace, find_workspace
