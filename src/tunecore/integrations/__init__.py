"""Ray's `ray.air.integrations` modules, where a rewritten import reaches
them: `tunecore.integrations.mlflow`, `.wandb`, `.comet` and `.keras`, each behind
its extra (`pip install 'tunecore[keras]'`). The training libraries'
callbacks (Ray's `ray.tune.integration`) are in `tunecore.integration`."""
