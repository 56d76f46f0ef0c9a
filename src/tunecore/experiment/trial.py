"""`ray.tune.experiment.trial`, the module Ray's guides import `Trial`
from (`from ray.tune.experiment.trial import Trial`), and `ExportFormat`,
the names `RunConfig(export_formats=[...])` takes (`ExportFormat.MODEL` is
the string "model")."""

from tunecore._not_provided import not_provided_getattr
from tunecore.model.trial import ExportFormat
from tunecore.shell.trial_view import Trial

__all__ = ["ExportFormat", "Trial"]

__getattr__ = not_provided_getattr(__name__)
