"""Ray Tune's `ray.tune.integration` modules, where a rewritten import
reaches them: `tunecore.integration.xgboost`, `.lightgbm`, `.keras` and
`.pytorch_lightning`, each behind its extra (`pip install
'tunecore[keras]'`), and `.ray_train` (a Ray Train run's reports to the
trial that launched it; needs `ray[train]`). Experiment trackers and Ray Train's Keras callback
(Ray's `ray.air.integrations`) are in `tunecore.integrations`."""
