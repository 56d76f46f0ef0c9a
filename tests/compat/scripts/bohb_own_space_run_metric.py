# mypy: ignore-errors
# requires: ConfigSpace, hpbandster
"""TuneBOHB built with a ConfigSpace of its own, the metric and mode given to
the run alone: Ray Tune 2.60 fails the run at the first suggestion.

Follows test_trial_scheduler.py's HyperBandForBOHB tests and the
`TuneBOHB` docstring (python/ray/tune/search/bohb/bohb_search.py in Ray
2.60): `TuneBOHB(space=config_space)` with a ConfigSpace, a Trainable class,
`HyperBandForBOHB`, and `metric=`/`mode=` passed to `tune.run` (and to
`TuneConfig`) but not to the searcher. Ray's `tune.run` offers the run's
metric and mode to a searcher only together with a `config` to search
(`set_search_properties`), and TuneBOHB refuses that once it has a space of
its own, so it never hears them: `RuntimeError: Trying to sample a
configuration from TuneBOHB, but the metric (None) or mode (None)
parameters have not been set`. tunecore handed the run's metric to it and
the run went on. Given to the searcher itself, the same run passes.
"""

import ConfigSpace as CS

import tunecore as tune
from tunecore.schedulers import HyperBandForBOHB
from tunecore.search.bohb import TuneBOHB


class MyTrainableClass(tune.Trainable):
    def setup(self, config):
        self.timestep = 0

    def step(self):
        self.timestep += 1
        v = (self.config["width"] / 10 - 1) ** 2
        return {"episode_reward_mean": -v / self.timestep**0.5}

    def save_checkpoint(self, checkpoint_dir):
        return {"timestep": self.timestep}

    def load_checkpoint(self, checkpoint):
        self.timestep = checkpoint["timestep"]


def config_space():
    space = CS.ConfigurationSpace(seed=4)
    space.add(CS.UniformFloatHyperparameter("width", lower=0, upper=20))
    return space


def run_with(search_alg):
    return tune.run(
        MyTrainableClass,
        scheduler=HyperBandForBOHB(time_attr="training_iteration", max_t=3),
        search_alg=search_alg,
        num_samples=2,
        stop={"training_iteration": 3},
        metric="episode_reward_mean",
        mode="max",
        verbose=0,
    )


def fit_with(search_alg):
    return tune.Tuner(
        MyTrainableClass,
        tune_config=tune.TuneConfig(
            search_alg=search_alg, metric="episode_reward_mean", mode="max", num_samples=2
        ),
        run_config=tune.RunConfig(stop={"training_iteration": 2}, verbose=0),
    ).fit()


messages = []
for entry in (run_with, fit_with):
    try:
        entry(TuneBOHB(space=config_space(), seed=4))
    except RuntimeError as error:
        messages.append(str(error))
print(messages)
assert len(messages) == 2, messages
assert all("TuneBOHB" in m and "`metric` (None) or `mode` (None)" in m for m in messages)

searcher = TuneBOHB(space=config_space(), metric="episode_reward_mean", mode="max", seed=4)
analysis = run_with(searcher)
assert len(analysis.trials) == 2
assert all(0 <= t.config["width"] <= 20 for t in analysis.trials)
assert all(t.last_result["training_iteration"] >= 1 for t in analysis.trials)
