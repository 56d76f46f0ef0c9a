"""`ray.train._checkpoint`, where Ray 2.60 defines `Checkpoint`: its Tune
fault-tolerance guide (`doc/source/tune/doc_code/fault_tolerance.py`) and
release tests import it from there, so under the rewriting
(`ray.train.X` -> `tunecore.X`) it must be tunecore's `Checkpoint`."""

from tunecore.shell.trainable import Checkpoint

__all__ = ["Checkpoint"]
