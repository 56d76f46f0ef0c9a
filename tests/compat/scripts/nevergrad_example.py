# mypy: ignore-errors
# requires: nevergrad
"""Nevergrad's OnePlusOne over tune's domains, behind a concurrency limit,
with a separate scheduler.

Follows Ray Tune's python/ray/tune/examples/nevergrad_example.py (Ray 2.x),
with the imports rewritten. Smaller than Ray's run to stay fast: 12
samples (Ray: 10 with --smoke-test, else 50), 10 steps per trial instead of
100 and no sleeps. nevergrad is imported after tunecore.search.nevergrad:
nevergrad 1.0.3's own import breaks beside bayesian-optimization 3 (which
tunecore[search] installs, and under Ray Tune too), and that module imports
it past the break.

Checked on Ray Tune 2.60 with tests/compat/on_ray_tune.py (ray[tune]
2.60.0 with nevergrad 1.0.12 and bayesian-optimization 1.4.0, as `pip
install nevergrad` gives them, 2026-12-06): passes (91 s).
"""

import tunecore as tune
from tunecore.schedulers import AsyncHyperBandScheduler
from tunecore.search import ConcurrencyLimiter
from tunecore.search.nevergrad import NevergradSearch

# isort: split
import nevergrad as ng


def evaluation_fn(step, width, height):
    return (0.1 + width * step / 100) ** (-1) + height * 0.1


def easy_objective(config):
    # Hyperparameters
    width, height = config["width"], config["height"]

    for step in range(config["steps"]):
        # Iterative training function - can be any arbitrary training procedure
        intermediate_score = evaluation_fn(step, width, height)
        # Feed the score back back to Tune.
        tune.report({"iterations": step, "mean_loss": intermediate_score})


if __name__ == "__main__":
    # Optional: Pass the parameter space yourself
    # space = ng.p.Dict(
    #     width=ng.p.Scalar(lower=0, upper=20),
    #     height=ng.p.Scalar(lower=-100, upper=100),
    #     activation=ng.p.Choice(choices=["relu", "tanh"])
    # )

    algo = NevergradSearch(
        optimizer=ng.optimizers.OnePlusOne,
        # space=space,  # If you want to set the space manually
    )
    algo = ConcurrencyLimiter(algo, max_concurrent=4)

    scheduler = AsyncHyperBandScheduler()

    tuner = tune.Tuner(
        easy_objective,
        tune_config=tune.TuneConfig(
            metric="mean_loss",
            mode="min",
            search_alg=algo,
            scheduler=scheduler,
            num_samples=12,
        ),
        run_config=tune.RunConfig(name="nevergrad"),
        param_space={
            "steps": 10,
            "width": tune.uniform(0, 20),
            "height": tune.uniform(-100, 100),
            "activation": tune.choice(["relu", "tanh"]),
        },
    )
    results = tuner.fit()

    print("Best hyperparameters found were: ", results.get_best_result().config)

    # The outcome Ray Tune gives: every trial ran, on configs within the domains.
    assert len(results) == 12
    assert not results.errors
    for result in results:
        config = result.config
        assert 0 <= config["width"] <= 20
        assert -100 <= config["height"] <= 100
        assert config["activation"] in ("relu", "tanh")
    best = results.get_best_result().metrics["mean_loss"]
    assert best == min(r.metrics["mean_loss"] for r in results)
