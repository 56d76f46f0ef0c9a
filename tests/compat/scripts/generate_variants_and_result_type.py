# mypy: ignore-errors
"""Listing a space's configs with `generate_variants`, and `Result` imported
from the module that defines it in Ray.

Follows users' Ray 2.x scripts (public repositories): one counts and prints
the variants of a grid before launching anything (`from
ray.tune.search.variant_generator import generate_variants`), others import
the result class for their helpers' type hints (`from ray.air.result import
Result`, `from ray.tune.result_grid import Result`).
"""

import tunecore as tune
from tunecore.result_grid import Result, ResultGrid
from tunecore.search.variant_generator import generate_variants

search_space = {
    "timeout": 3600,
    "application_id": tune.grid_search(["speakToMe", "arFarming", "distSecurity"]),
    "seed": tune.grid_search([3997, 151195]),
    "preprocess": tune.grid_search([False, True]),
    "cr": tune.sample_from(lambda spec: spec.config.preprocess and spec.config.seed > 5000),
}

variants = list(generate_variants(search_space))
print(len(variants))
assert len(variants) == 3 * 2 * 2
for resolved_vars, config in variants:
    assert (
        resolved_vars[("cr",)] == config["cr"] == (config["preprocess"] and config["seed"] > 5000)
    )
    assert resolved_vars[("seed",)] == config["seed"]
    assert config["timeout"] == 3600
# The first grid key changes fastest, as trials are generated.
assert [c["application_id"] for _, c in variants[:3]] == ["speakToMe", "arFarming", "distSecurity"]


def trainable(config):
    tune.report({"score": config["seed"] % 7 + int(config["cr"])})


def best_of(results: ResultGrid) -> Result:
    return results.get_best_result(metric="score", mode="max")


results = tune.Tuner(trainable, param_space=search_space).fit()
best = best_of(results)
assert isinstance(best, Result)
assert not results.errors
ran = sorted(
    (r.config["application_id"], r.config["seed"], r.config["preprocess"]) for r in results
)
listed = sorted((c["application_id"], c["seed"], c["preprocess"]) for _, c in variants)
assert ran == listed
assert best.metrics["score"] == max(r.metrics["score"] for r in results)
