from collections.abc import Mapping
from typing import Any

registry: Mapping[str, Any]
