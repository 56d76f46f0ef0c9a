"""`ray.tune.impl`: of Ray Tune's internals, only `ray.tune.impl.config`
(the run configuration classes, which RLlib's examples import from there)
has a counterpart; the rest (`tuner_internal`, `placeholder`, ...) fails
with an ImportError saying what to use."""

from tunecore._not_provided import not_provided_getattr

__getattr__ = not_provided_getattr(__name__)
