"""Ray Tune's `ray.tune.utils` helpers that Ray's own examples import, so
those scripts run after only their imports are rewritten."""
