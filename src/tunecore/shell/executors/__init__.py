"""Executors run trials on workers: `RayExecutor` (the default, in
`tunecore.shell.executors.ray`, imported on demand because Ray is slow to
load) and `InProcessExecutor` (threads, no Ray)."""

from tunecore.shell.executors.base import Executor
from tunecore.shell.executors.inprocess import InProcessExecutor

__all__ = ["Executor", "InProcessExecutor"]
