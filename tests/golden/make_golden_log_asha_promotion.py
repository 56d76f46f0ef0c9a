"""Writes `tests/golden/log_v1_asha_promotion/`: a log of format 1 whose
scheduler is ASHA's promotion variant as tunecore stored it before the
variants became two structs (`ASHAScheduler` with `variant="promotion"`),
which every later tunecore must keep reading (`tests/test_golden_log.py`):
its snapshots now decode as `ASHAPromotionScheduler`. It was run once, by
that older tunecore, and its output is checked in:

    python -c "from pathlib import Path;
               from tests.golden.make_golden_log_asha_promotion import main;
               main(Path('tests/golden/log_v1_asha_promotion'))"
"""

from __future__ import annotations

import json
import shutil
import tempfile
from pathlib import Path

import tunecore
from tunecore import RunConfig, TuneConfig
from tunecore.model import JsonDict, Resources
from tunecore.schedulers import ASHAScheduler


def curve(config: JsonDict, iteration: int) -> tuple[JsonDict, float]:
    a, b = config["a"], config["b"]
    assert isinstance(a, float)
    assert isinstance(b, float)
    return {"loss": a + b / iteration}, 1.0 + a


def main(out: Path) -> None:
    with tempfile.TemporaryDirectory() as root:
        results = tunecore.simulate(
            curve,
            param_space={"a": tunecore.uniform(0.0, 1.0), "b": tunecore.uniform(0.0, 5.0)},
            tune_config=TuneConfig(
                metric="loss",
                mode="min",
                num_samples=9,
                seed=7,
                scheduler=ASHAScheduler(  # the old spelling, refused since
                    max_t=9, grace_period=1, reduction_factor=3, variant="promotion"
                ),
            ),
            run_config=RunConfig(name="golden", storage_path=root, verbose=0),
            cluster=Resources(cpu=2),
            max_iterations=9,
        )
        directory = Path(results.experiment_path)
        out.mkdir(parents=True)
        shutil.copy(directory / "events.log", out / "events.log")
        shutil.copytree(directory / "snapshots", out / "snapshots")
    replayed = tunecore.replay(out)
    trials = replayed.state.trials.values()
    expected = {
        "records": replayed.records,
        "commands": len(replayed.commands),
        "statuses": sorted(t.status.value for t in trials),
        "iterations": sorted(int(str(t.last_result["training_iteration"])) for t in trials),
        "kinds": ["ResultReported", "TrialRestored"],
    }
    (out / "expected.json").write_text(json.dumps(expected, indent=2) + "\n")
