"""Ray Tune's scalability release tests, shrunk: each workload script
(`release/tune_tests/scalability_tests/workloads/test_*.py`) calls
`timed_tune_run` from `ray.tune.utils.release_test_util` and passes when the
run ends within its budget; the fault-tolerance ones watch the trials'
statuses with `ray.tune.utils.mock.TrialStatusSnapshotTaker`.

Here: the result-throughput workload (trials reporting 20 times a second
for a second), then the checkpointing one (a 1 KB checkpoint of two files
every 0.1 s), with a status snapshot taker and the progress callback.
"""

import json
import os

import ray

from tunecore.utils.mock import TrialStatusSnapshot, TrialStatusSnapshotTaker
from tunecore.utils.release_test_util import ProgressCallback, timed_tune_run


def main() -> None:
    os.environ["TUNE_DISABLE_AUTO_CALLBACK_LOGGERS"] = "1"  # Tweak
    os.environ["TEST_OUTPUT_JSON"] = os.path.abspath("release_test_output.json")

    ray.init(num_cpus=2)

    passed = timed_tune_run(
        name="result throughput single node",
        num_samples=4,
        results_per_second=20,
        trial_length_s=1,
        max_runtime=120,
    )
    assert passed
    with open(os.environ["TEST_OUTPUT_JSON"]) as f:
        summary = json.load(f)
    assert summary["trial_states"] == {"TERMINATED": 4}, summary
    assert 0 < summary["time_taken"] <= 120

    snapshot = TrialStatusSnapshot()
    passed = timed_tune_run(
        name="checkpointing",
        num_samples=3,
        results_per_second=10,
        trial_length_s=1,
        max_runtime=120,
        checkpoint_freq_s=0.1,
        checkpoint_size_b=1024,
        checkpoint_num_files=2,
        callbacks=[TrialStatusSnapshotTaker(snapshot), ProgressCallback()],
        storage_path=os.path.abspath("results"),
    )
    assert passed
    assert snapshot.all_trials_are_terminated()
    assert 1 <= snapshot.max_running_trials() <= 2
    checkpoints = [
        os.path.join(root, name)
        for root, _, files in os.walk("results")
        for name in files
        if name.startswith("bogus_")
    ]
    # Each trial saves at every one of its 10 results, 2 files of 1 KB each;
    # Ray keeps them all (no num_to_keep).
    assert len(checkpoints) == 3 * 10 * 2, len(checkpoints)
    assert {os.path.getsize(path) for path in checkpoints} == {1024}


if __name__ == "__main__":
    main()
