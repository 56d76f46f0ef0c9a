"""`ray.tune.progress_reporter`, the module of Ray's reporters
(`from ray.tune.progress_reporter import CLIReporter`)."""

from tunecore.api.reporters import CLIReporter, JupyterNotebookReporter, ProgressReporter

__all__ = ["CLIReporter", "JupyterNotebookReporter", "ProgressReporter"]
