"""`ray.tune.logger.mlflow`: MLflow's logger callback, which lives in
`tunecore.integrations.mlflow` (`pip install 'tunecore[mlflow]'`)."""

from tunecore.integrations.mlflow import MLflowLoggerCallback

__all__ = ["MLflowLoggerCallback"]
