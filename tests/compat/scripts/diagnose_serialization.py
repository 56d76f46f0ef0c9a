# mypy: ignore-errors
"""Finding what keeps a trainable from serializing, then fixing it.

Follows the example in the docstring of Ray Tune's
`ray.tune.utils.diagnose_serialization` (API reference, "Tune Trainable
Debugging Utilities"): a trainable that uses a global `threading.Event`
cannot be sent to its worker; the diagnosis names the variable, and the
trainable that creates its own runs.
"""

import threading

import tunecore as tune
from tunecore.utils import diagnose_serialization

# this is not serializable
e = threading.Event()


def test(config):
    print(e)
    tune.report({"score": 1})


diagnosis = diagnose_serialization(test)
assert diagnosis == {"e"}, diagnosis


def test_fixed(config):
    event = threading.Event()  # created inside the trainable: nothing global to ship
    print(event)
    tune.report({"score": config["x"]})


assert diagnose_serialization(test_fixed) is True

results = tune.Tuner(test_fixed, param_space={"x": tune.grid_search([1, 2])}).fit()
assert not results.errors
assert sorted(r.metrics["score"] for r in results) == [1, 2]
