# mypy: ignore-errors
"""A user's custom Searcher written the way Ray's built-in ones are: its
constructor splits the space it is given with `parse_spec_vars` and
converts the domains it finds, and its `set_search_properties` takes
whatever config it is offered, without first checking for a space of its
own.

Follows a public repository's Latin-hypercube searcher (its own sampler
replaced by a fixed walk over each categorical's values): on tunecore it
failed at `from ray.tune.search.variant_generator import parse_spec_vars`
(no such module), and then, given its own space to `tune.run` with no
config, every suggestion failed: tunecore offered it the empty config,
which replaced its space, where Ray Tune calls `set_search_properties`
only when there is a config to offer.
"""

import tunecore as tune
from tunecore.search import UNDEFINED_SEARCH_SPACE, Searcher
from tunecore.search.sample import Categorical
from tunecore.search.variant_generator import parse_spec_vars


class WalkSearcher(Searcher):
    def __init__(self, space=None, metric=None, mode=None):
        super().__init__(metric=metric, mode=mode)
        if isinstance(space, dict) and space:
            _resolved, domain_vars, grid_vars = parse_spec_vars(space)
            if domain_vars or grid_vars:
                space = self.convert_search_space(space)
        self._space = space
        self._count = 0

    def set_search_properties(self, metric, mode, config, **spec):
        self._space = self.convert_search_space(config)
        self._metric = metric or self._metric
        self._mode = mode or self._mode
        return True

    def suggest(self, trial_id):
        if not self._space:
            raise RuntimeError(
                UNDEFINED_SEARCH_SPACE.format(cls=type(self).__name__, space="space")
            )
        config = {key: values[self._count % len(values)] for key, values in self._space.items()}
        self._count += 1
        return config

    def on_trial_complete(self, trial_id, result=None, error=False):
        return None

    def convert_search_space(self, spec):
        space = {}
        for key, value in spec.items():
            if not isinstance(value, Categorical):
                raise NotImplementedError("only categorical dimensions")
            space[key] = value.categories
        return space


def objective(config):
    tune.report({"score": config["a"] * 10 + len(config["b"])})


space = {"a": tune.choice([1, 2, 3]), "b": tune.choice(["x", "yy"])}

# Given to a Tuner with the space: set_search_properties converts it.
grid = tune.Tuner(
    objective,
    param_space=space,
    tune_config=tune.TuneConfig(
        search_alg=WalkSearcher(), metric="score", mode="max", num_samples=3
    ),
).fit()
assert sorted((r.config["a"], r.config["b"]) for r in grid) == [(1, "x"), (2, "yy"), (3, "x")]

# Its own space, and tune.run with no config: the searcher keeps it.
analysis = tune.run(
    objective, search_alg=WalkSearcher(space, metric="score", mode="max"), num_samples=3
)
assert [t.config for t in analysis.trials] == [
    {"a": 1, "b": "x"},
    {"a": 2, "b": "yy"},
    {"a": 3, "b": "x"},
]
assert analysis.get_best_config("score", "max") == {"a": 3, "b": "x"}

# parse_spec_vars on a nested space: Ray's split, grids sorted by path.
resolved, domain_vars, grid_vars = parse_spec_vars(
    {"lr": 0.1, "opt": {"m": tune.uniform(0, 1), "n": tune.grid_search([1, 2])}, "k": [1, 2]}
)
assert resolved == [(("lr",), 0.1), (("k", 0), 1), (("k", 1), 2)]
assert [path for path, _ in domain_vars] == [("opt", "m")]
assert [(path, grid.categories) for path, grid in grid_vars] == [(("opt", "n"), [1, 2])]
