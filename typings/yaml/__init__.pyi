# The part of PyYAML tunecore uses (`tunecore.api.pretty`).
from typing import Any

def safe_dump(data: Any, stream: None = None, **kwds: Any) -> str: ...
