"""`ray.tune.search.basic_variant`'s name, for scripts that import it from there."""

from tunecore.core.search import BasicVariantGenerator

__all__ = ["BasicVariantGenerator"]
