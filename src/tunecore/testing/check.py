"""`check_policy`: a ready Hypothesis stateful test for any trial scheduler.

Hypothesis adds trials (of one size per run, fractional CPUs to several,
on clusters of one to four CPUs), reports learning-curve results for
running ones, completes and fails them, in any order it finds, through a `PolicyDriver`
(so the scheduler meets tunecore's real protocol), and shrinks whatever
breaks to a short sequence of calls. After every call it checks:

- a trial that ended (TERMINATED or ERROR) never runs again;
- the scheduler's choices are legal: `choose_trial_to_run` picks a
  pending or paused trial (asked again on the current state, anything
  fitting), and `trials_to_stop` names no trial that has ended (the
  experiment stopped those and told the scheduler);
- no more trials run than the cluster holds;
- the whole state, the scheduler's included, survives a snapshot (encoded
  and decoded, as a resume reads it) unchanged.

At the end of each example:

- the same calls, replayed on a freshly built scheduler, give the same
  state (same events, same decisions);
- no trial starves: with no new trials, running ones keep reporting (each
  ends after `MAX_RESULTS` results) and the experiment must end with every
  trial ended, within a bounded number of calls, without the core's
  dead-end error ("the scheduler resumed none of ...").

Call it from a test, once per policy configuration:

    def test_my_policy():
        check_policy(lambda: MyScheduler(metric="loss", mode="min"))

Needs the `testing` extra (`pip install "tunecore[testing]"`).
"""

from __future__ import annotations

from collections.abc import Callable

try:
    from hypothesis import HealthCheck, settings
    from hypothesis import strategies as st
    from hypothesis.stateful import (
        RuleBasedStateMachine,
        initialize,
        invariant,
        precondition,
        rule,
        run_state_machine_as_test,
    )
except ImportError as error:  # pragma: no cover - depends on the environment
    raise ImportError(
        'tunecore.testing.check needs Hypothesis: pip install "tunecore[testing]"'
    ) from error

from tunecore.core.results import TRAINING_ITERATION
from tunecore.core.schedulers.base import TrialScheduler
from tunecore.model import Mode, Resources, TrialStatus
from tunecore.testing.driver import PolicyDriver
from tunecore.testing.strategies import (
    METRIC_VALUES,
    cluster_cpus,
    learning_curves,
    resource_shapes,
)

MAX_RESULTS = 30
"""How many results a trial reports at most before its trainable ends."""

_ENDED = (TrialStatus.TERMINATED, TrialStatus.ERROR)


class PolicyViolation(AssertionError):
    """The policy broke a rule of the scheduler protocol (see the module docstring)."""


def check_policy(
    make_scheduler: Callable[[], TrialScheduler],
    *,
    metric: str = "loss",
    mode: Mode | str = Mode.MIN,
    max_examples: int = 60,
    max_trials: int = 8,
) -> None:
    """Run the stateful test on the scheduler `make_scheduler` builds (it is
    called again for each example and for the replay, so it must build the
    same policy each time). `metric` is the key results report; `mode` is
    passed to the experiment for policies that take it from there. Raises
    with the shrunk sequence of calls when a rule breaks."""

    class Machine(_PolicyMachine):
        pass

    Machine.make_scheduler = staticmethod(make_scheduler)
    Machine.metric = metric
    Machine.mode = Mode(mode)
    Machine.max_trials = max_trials
    run_state_machine_as_test(
        Machine,
        settings=settings(
            max_examples=max_examples,
            stateful_step_count=40,
            deadline=None,
            suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
        ),
    )


class _PolicyMachine(RuleBasedStateMachine):
    make_scheduler: Callable[[], TrialScheduler]
    metric: str
    mode: Mode
    max_trials: int

    def __init__(self) -> None:
        super().__init__()
        self.driver: PolicyDriver | None = None
        self.curves: dict[str, list[float]] = {}
        self.ended: set[str] = set()

    @initialize(cpus=cluster_cpus(), size=resource_shapes())
    def start(self, cpus: float, size: Resources) -> None:
        self.driver = PolicyDriver(
            type(self).make_scheduler(),
            cpus=cpus,
            metric=self.metric,
            mode=self.mode,
            resources_per_trial=size,
        )

    @property
    def _driver(self) -> PolicyDriver:
        assert self.driver is not None  # set by @initialize before any rule
        return self.driver

    def _running(self) -> list[str]:
        return self._driver.trial_ids(TrialStatus.RUNNING)

    # -- rules --------------------------------------------------------------

    @precondition(lambda self: not self._driver.done and len(self.curves) < self.max_trials)
    @rule(curve=learning_curves(max_length=MAX_RESULTS))
    def add(self, curve: list[float]) -> None:
        self.curves[self._driver.add({"n": len(self.curves)})] = curve

    @precondition(lambda self: bool(self._running()))
    @rule(data=st.data())
    def report(self, data: st.DataObject) -> None:
        self._follow_curve(data.draw(st.sampled_from(self._running()), label="trial"))

    @precondition(lambda self: bool(self._running()))
    @rule(data=st.data(), value=METRIC_VALUES)
    def report_any_value(self, data: st.DataObject, value: float) -> None:
        trial_id = data.draw(st.sampled_from(self._running()), label="trial")
        self._report(trial_id, value)

    @precondition(lambda self: bool(self._running()))
    @rule(data=st.data())
    def fail(self, data: st.DataObject) -> None:
        trial_id = data.draw(st.sampled_from(self._running()), label="trial")
        self._driver.fail(trial_id)

    @rule()
    def time_passes(self) -> None:
        """A moment with no event from any trial (always possible, also
        once the experiment is over)."""
        if not self._driver.done:
            self._driver.tick()

    def _report(self, trial_id: str, value: float) -> None:
        self._driver.result(trial_id, **{self.metric: value})

    def _follow_curve(self, trial_id: str) -> None:
        """The running trial's next result on its curve, or its end past it."""
        count = self._driver.trial(trial_id).last_result.get(TRAINING_ITERATION, 0)
        assert isinstance(count, int)
        curve = self.curves[trial_id]
        if count >= len(curve):
            self._driver.complete(trial_id)
        else:
            self._report(trial_id, curve[count])

    # -- invariants -----------------------------------------------------------

    @invariant()
    def ended_trials_stay_ended(self) -> None:
        if self.driver is None:
            return
        for trial_id in self.ended:
            status = self._driver.status(trial_id)
            if status not in _ENDED:
                raise PolicyViolation(f"{trial_id} ended, then became {status.value}")
        self.ended |= {t for t in self._driver.trial_ids() if self._driver.status(t) in _ENDED}

    @invariant()
    def choices_are_legal(self) -> None:
        if self.driver is None:
            return
        driver = self._driver
        waiting = driver.trial_ids(TrialStatus.PENDING), driver.trial_ids(TrialStatus.PAUSED)
        pending, paused = ([driver.trial(t) for t in ids] for ids in waiting)
        chosen = driver.scheduler.choose_trial_to_run(pending, paused, lambda _: True)
        if chosen is not None and chosen not in {*waiting[0], *waiting[1]}:
            status = driver.status(chosen).value if chosen in driver.state.trials else "unknown"
            raise PolicyViolation(f"choose_trial_to_run picked {chosen}, which is {status}")
        for trial_id in driver.scheduler.trials_to_stop():
            if trial_id in driver.state.trials and driver.status(trial_id) in _ENDED:
                raise PolicyViolation(f"trials_to_stop still names {trial_id}, which has ended")

    @invariant()
    def running_trials_fit(self) -> None:
        if self.driver is None:
            return
        state = self._driver.state
        if state.total is not None and state.used.cpu > state.total.cpu:
            raise PolicyViolation(f"{state.used.cpu} CPUs in use on {state.total.cpu}")

    @invariant()
    def state_survives_a_snapshot(self) -> None:
        if self.driver is None:
            return
        if self._driver.restore(self._driver.snapshot()) != self._driver.state:
            raise PolicyViolation("the state, decoded from its snapshot, differs")

    def teardown(self) -> None:
        if self.driver is None:
            return
        if self._driver.replay_on(type(self).make_scheduler()) != self._driver.state:
            raise PolicyViolation("the same events, replayed on a new policy, gave another state")
        self._run_to_the_end()

    def _run_to_the_end(self) -> None:
        """Liveness: with no new trials, keep every running trial reporting
        its curve until it ends; the experiment must end."""
        driver = self._driver
        budget = (MAX_RESULTS + 2) * max(len(self.curves), 1) * 4
        while not driver.done and budget > 0:
            running = self._running()
            if not running:
                break
            for trial_id in running:
                budget -= 1
                if driver.status(trial_id) is TrialStatus.RUNNING:  # another's result may stop it
                    self._follow_curve(trial_id)
        waiting = [t for t in driver.trial_ids() if driver.status(t) not in _ENDED]
        if waiting or driver.state.error is not None:
            raise PolicyViolation(
                f"trials never ended: {', '.join(waiting) or 'none'}; "
                f"the experiment says: {driver.state.error}"
            )
