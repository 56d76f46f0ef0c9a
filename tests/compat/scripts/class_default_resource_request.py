# mypy: ignore-errors
"""A Trainable asks for its own resources with default_resource_request.

Follows Ray Tune's Trainable class API reference (tune/api/trainable.rst,
"Advanced: Reusing Actors" / default_resource_request) and the resources
FAQ ("How do I set resources?", tune/faq.rst).
"""

import itertools
import time

import tunecore as tune


class TwoCpuTrainable(tune.Trainable):
    @classmethod
    def default_resource_request(cls, config):
        # Every trial needs two CPUs: on a two-CPU machine, one at a time.
        return tune.PlacementGroupFactory([{"CPU": 2}])

    def setup(self, config):
        self.started = time.time()

    def step(self):
        time.sleep(0.05)
        return {"started": self.started, "now": time.time()}

    def save_checkpoint(self, checkpoint_dir):
        pass

    def load_checkpoint(self, checkpoint_dir):
        pass


tuner = tune.Tuner(
    TwoCpuTrainable,
    param_space={"x": tune.grid_search([1, 2, 3])},
    run_config=tune.RunConfig(stop={"training_iteration": 5}),
)
results = tuner.fit()

assert len(results) == 3
assert not results.errors
spans = sorted((r.metrics["started"], r.metrics["now"]) for r in results)
# No two trials ever ran at the same time.
for (_, end), (start, _) in itertools.pairwise(spans):
    assert end <= start, spans
