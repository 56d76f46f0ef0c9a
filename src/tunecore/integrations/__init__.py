"""Ray's `ray.air.integrations` modules, where a rewritten import reaches
them: `tunecore.integrations.mlflow` and `tunecore.integrations.wandb`,
each behind its extra (`pip install 'tunecore[mlflow]'`). The boosting
libraries' callbacks (Ray's `ray.tune.integration`) are in
`tunecore.integration`."""
