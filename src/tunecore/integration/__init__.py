"""Ray Tune's `ray.tune.integration` modules, where a rewritten import
reaches them: `tunecore.integration.xgboost` and
`tunecore.integration.lightgbm`, each behind its extra
(`pip install 'tunecore[xgboost]'`). Experiment trackers (Ray's
`ray.air.integrations`) are in `tunecore.integrations`."""
