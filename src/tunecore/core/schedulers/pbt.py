"""Population Based Training (Jaderberg et al. 2017), asynchronous or
synchronous, as Ray Tune implements it.

Theory of operation: every trial trains on its own; each time one has run
`perturbation_interval` (in `time_attr` units, and is past
`burn_in_period`) since its last perturbation, it is ranked against the
population by the score each member had at its own last perturbation
("truncation selection"). If it is in the top `quantile_fraction` it saves a
persistent checkpoint so others can clone it (`Verdict.checkpoint`); if it
is in the bottom `quantile_fraction` it takes the weights of a top trial
chosen uniformly at random and that trial's hyperparameters, perturbed by
`explore` (`Verdict.exploit`). The weights are the checkpoint the donor
saved at its own last perturbation, as Ray's `last_checkpoint`
(`clones_perturbation_save`): none when it was no top trial then, and
none when that save does not hold the state of its result there (a
function trainable's save is the checkpoint it reported last: Ray's is
the one reported with that result, `CheckpointRef.earlier`, or none,
`CheckpointRef.empty`). A donor with none is not cloned: the trial goes
on unchanged, as Ray skips the exploit ("[pbt]: no checkpoint for trial
... Skip exploit"). The exploited trial also takes over the donor's last
perturbation time, since restoring the donor's checkpoint rewinds or
advances its clock to the donor's.

Synchronous PBT (`synch=True`, Ray's Appendix A.1 mode): a trial at its
interval pauses with a persistent checkpoint until every live trial has
reached the barrier (`next_sync`); the result that completes it (or the
end of the last trial behind it) ranks the population, counts the upper
quantile's checkpoints and plans an exploit for each lower trial
(`plans`), then moves the barrier on by an interval. The planned exploits
are carried out on the waiting trials (`ExploitsWaiting`) once the
donor's barrier checkpoint is saved; `choose_trial_to_run` starts only
trials behind the barrier, the least trained first, and neither a planned
trial nor its donor before the exploit is done.

`custom_explore_fn` is user code, which the core cannot run: an exploit
waits (the trial pauses) while PBT asks the shell for the function's
answer on the explored config (`wanted`, a `ValuesDrawn` event the log
keeps), then takes the answer as the trial's config. So replay and
resume need no function: the log holds every config it returned. A
restore (which is not given the scheduler) goes on without it: the
configs PBT explores after the restore are used as they are, with a
warning, as for mutation functions.

`log_config` (Ray's default, True) asks the shell to write Ray's
`pbt_global.txt` and `pbt_policy_<trial_id>.txt` (`RecordExploit`);
`PopulationBasedTrainingReplay` (`pbt_replay`) replays such a file.

Invariants:

- `members[id]` exists for every trial added (or first seen), in the order
  they arrived (a dict, not a persistent map: ties in the ranking keep
  that order, and the dict is copied only when a trial is added or
  finishes and at a perturbation, which ranks every member anyway);
  `last_score` is the signed score (greater is better) at the member's
  last perturbation, None before its first one.
- Ranking sees only members with a score that are not finished; the lower
  and upper quantiles are disjoint, each `k` members, where
  `k = ceil(n * quantile_fraction)` cut down to `floor(n / 2)`, and empty
  when `n <= 1` or `k == 0`.
- An exploit is only ever returned for a lower-quantile trial, names an
  upper-quantile donor, and restores from a PERSISTENT checkpoint the donor
  holds, never an empty one; its config is the donor's config (as PBT last knew it) with every
  mutated value either resampled from its space, scaled by one of
  `perturbation_factors` (ints stay ints), or moved to a neighbouring
  category.
- All randomness is drawn from `rng` (seeded by `seed` on first use), in a
  fixed order, so the same seed and the same events give the same decisions,
  also after a msgpack round trip.

Mutation specs are a list of categories, a search domain (a msgspec struct
with `sample(rng)`), a function of no argument (Ray's `lambda:
random.uniform(0.8, 1.2)`), or a dict nesting them. A function is code, not
data: PBT keeps its place (`MutationFunction`) and holds one value of it
ready (`drawn`), which the shell draws when PBT asks (`wanted`) and logs;
an exploit uses the ready values and asks for fresh ones, so replay and
resume need no user code.
Nested dicts are stored flattened to '/'-joined paths, the convention
results and stopping criteria use, so a config key containing '/' cannot be
mutated. To decode a scheduler holding domains, name their types:
`from_msgpack(data, PopulationBasedTraining[SamplingDomain])` with the union
from `tunecore.core.search.domains`; one holding only category lists decodes
as plain `PopulationBasedTraining`.

Deviations from Ray (python/ray/tune/schedulers/pbt.py, async mode):

- The donor's checkpoint is Ray's (the save at its last perturbation,
  see above), found in its persistent checkpoints by the iteration of
  that result, so it survives a driver restart; a donor whose save there
  is still in flight when another trial exploits it is skipped (Ray waits
  for the save), and one whose save retention deleted is skipped (Ray's
  restore would fail). Policies logged before `clones_perturbation_save`
  clone the donor's newest persistent checkpoint with state, as they ran.
- Taking turns (`take_turns`, as Ray): at a perturbation, a trial pauses
  when another one waits (PENDING or PAUSED), and the waiting trial with
  the least training (its last perturbation time; creation order breaks
  ties) starts next, so a population larger than the cluster trains in
  turns. An exploited trial pauses only then, with the donor's state saved
  to memory; Ray pauses every exploited trial and resumes it at once when
  nobody waits, which is the same as going on. Experiments logged before
  `take_turns` existed decode with None and replay as they ran: no pauses,
  FIFO choice.
- `quantile_fraction == 0` disables checkpointing too (Ray's `trials[-0:]`
  puts every trial in the upper quantile and checkpoints all of them).
- A missing or non-numeric (or NaN) time or metric gives CONTINUE, as Ray
  with `require_attrs=False`. Under `require_attrs` (Ray's default) a
  result without `time_attr` or the metric fails its trial with the
  message of Ray's `RuntimeError` (`result_problem`), where Ray's whole
  run fails; strict metric checking, asked first as in Ray, fails it
  for a named metric anyway, and for Ray's anonymous `_metric` too
  (`metric_required`).
- Ray fills mutated keys missing from a new trial's config on
  `on_trial_add`; our hooks cannot change a config, so the Tuner adds them
  to the param space instead (`tunecore.api.mutation_space`), and a value
  still missing is resampled when the trial is first explored. A value that
  cannot be perturbed (a non-number under a domain) is resampled where Ray
  raises.
- The perturbed tag lists mutated leaves (`momentum=0.9000`), not Ray's
  top-level keys with a whole nested dict as value.
- An exploited trial restarts from the donor's checkpoint until it saves
  a persistent one of its own (`TrialState.exploited`): a driver killed
  meanwhile resumes it from there. Ray keeps no such record.
- `custom_explore_fn` runs in the driver between two events, and the
  exploited trial pauses until its answer is in (Ray calls it inline).
- Synchronous mode: a trial waiting at the barrier saves a persistent
  checkpoint (any of them may be a donor; Ray pauses with one too), and
  the exploits wait for the donors' saves instead of resolving futures.
  The donor whose result completed the barrier gives its save of that
  result (a function's: the checkpoint reported with it, or none, as
  Ray's save); a donor that waited there gives its newest checkpoint with
  state (Ray takes a paused trial's `checkpoint`). A lower trial whose
  donor ends up without one keeps its config (the explore step has drawn
  its numbers anyway; Ray draws none then), and is no perturbation
  (`num_perturbations` counts the exploits made, as Ray's; logs from
  before `clones_perturbation_save` counted it, and replay so). When several trials
  are explored at one barrier, only the first uses the values mutation
  functions drew for it; the others perturb those values.
- `require_attrs` fails the trial, not the run (see above).

Why one module of over 400 lines: the population's bookkeeping, the exploit
decision and the explore step (mutations, resampling, the perturbed tag) are
Ray Tune's one PBT, and the explore step's helpers are read with the
mutations they apply; splitting explore out is the next step if it grows.
"""

from __future__ import annotations

import copy
import inspect
import math
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import (
    TYPE_CHECKING,
    Generic,
    Protocol,
    Self,
    TypeAlias,
    TypeVar,
    cast,
    runtime_checkable,
)

import msgspec
from msgspec import UNSET, UnsetType

from tunecore.core.checkpoints import donor_checkpoint, perturbation_checkpoint
from tunecore.core.naming import PERTURBED
from tunecore.core.results import iteration_of
from tunecore.core.rng import Rng, integer_below, random_float, seeded
from tunecore.core.schedulers.base import (
    CONTINUE,
    Exploit,
    FirstComeFirstServed,
    Fits,
    Verdict,
    adopt_objective,
    check_objective_fields,
    evolve,
    first_fitting,
    require_objective,
    signed,
)
from tunecore.core.search.base import ValuesWanted
from tunecore.core.search.built import built
from tunecore.core.search.domains import DomainBuilder
from tunecore.core.search.view import Path
from tunecore.model import (
    CheckpointRef,
    Decision,
    InvalidFieldError,
    JsonDict,
    JsonValue,
    Mode,
    ModeArg,
    RecordExploit,
    TrialState,
    TrialStatus,
)
from tunecore.model.errors import (
    require_finite_non_negative,
    require_int,
)
from tunecore.model.numbers import is_finite_number, is_int, is_number

_OWNER = "PopulationBasedTraining"
_WAITING = (TrialStatus.PENDING, TrialStatus.PAUSED)
_MUTATIONS = f"{_OWNER}.hyperparam_mutations"
_ITERATION = "training_iteration"

CUSTOM_EXPLORE_PATH: Path = ("", "custom_explore_fn")
"""Where `wanted()` asks for `custom_explore_fn`'s answer: no mutation has
this path (a mutation key is never empty)."""


@runtime_checkable
class Samplable(Protocol):
    """A search domain PBT can resample from (the structs of
    `tunecore.core.search.domains` are)."""

    def sample(self, rng: Rng) -> tuple[Rng, JsonValue]: ...


if TYPE_CHECKING:
    from typing_extensions import TypeVar as _TypeVarWithDefault

    MutationSpec: TypeAlias = (
        list[JsonValue]
        | tuple[JsonValue, ...]
        | Samplable
        | DomainBuilder
        | Callable[[], object]
        | Mapping[str, "MutationSpec"]
    )
    D_co = _TypeVarWithDefault("D_co", bound=Samplable, default=Samplable, covariant=True)
else:
    # At run time the parameter only tells msgspec which domain structs to
    # decode; unparametrized it is Any, and a domain decoded as a plain dict
    # is rejected by `__post_init__` with a message saying so.
    MutationSpec = object
    D_co = TypeVar("D_co", covariant=True)


class MutationFunction(msgspec.Struct, frozen=True, tag=True, dict=True):
    """The place of a mutation function: its name is data; the function
    itself is kept beside the fields (`func`, not encoded), for the shell."""

    name: str = ""

    @property
    def func(self) -> Callable[[], object] | None:
        found: Callable[[], object] | None = self.__dict__.get("func")
        return found


def _function_place(func: Callable[[], object]) -> MutationFunction:
    place = MutationFunction(getattr(func, "__qualname__", type(func).__name__))
    place.__dict__["func"] = func
    return place


def _takes_no_argument(func: Callable[..., object]) -> bool:
    try:
        inspect.signature(func).bind()
    except TypeError:
        return False
    except ValueError:  # no signature to read (a builtin): trust it
        return True
    return True


FlatMutations: TypeAlias = dict[str, list[JsonValue] | Samplable | MutationFunction]
"""Mutation specs by '/'-joined config path, categories as lists."""

_V = TypeVar("_V")


class PopulationMember(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True):
    """What PBT remembers of one trial: the tag it was created with (perturbed
    tags are built from it, not chained), the config it last handed it, and
    its last perturbation."""

    original_tag: str = ""
    config: JsonDict = {}
    last_perturbation_time: float = 0.0
    last_score: float | None = None
    finished: bool = False
    last_train_time: float = 0.0
    """Synchronous PBT: the time of the trial's last result at a
    perturbation interval (Ray's `last_train_time`)."""
    saved_at: int | None = None
    """Under `clones_perturbation_save`: the iteration of the result at the
    member's last perturbation when it was in the upper quantile then; the
    save PBT asked for on that result is what it donates (Ray's
    `last_checkpoint`). None: it donates nothing (it was not a top trial)."""


class PlannedExploit(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True):
    """An exploit decided for a trial that waits (`ExploitsWaiting`): at
    synchronous PBT's barrier, or until `custom_explore_fn` answered.

    `restore_from` None means the donor's newest persistent checkpoint once
    its saves are in (the one it saved at the barrier; the donor does not
    start before this is done). `previous` is the trial's member before the
    exploit, kept for when the exploit is given up. The iterations are the
    policy line's (`log_config`), None when taken at the time it is done."""

    donor_id: str
    config: JsonDict
    experiment_tag: str
    previous: PopulationMember
    restore_from: CheckpointRef | None = None
    awaiting_custom: bool = False
    trial_iteration: int | None = None
    donor_iteration: int | None = None
    donor_saved_at: int | None = None
    """With `restore_from` None under `clones_perturbation_save`: the
    iteration of the donor's save to clone (`perturbation_checkpoint`), for
    the donor whose result completed synchronous PBT's barrier (Ray saves
    it then); None: the donor's newest checkpoint with state (a donor that
    waited at the barrier: Ray takes a paused trial's checkpoint)."""


class PopulationBasedTraining(
    msgspec.Struct, FirstComeFirstServed, Generic[D_co], frozen=True, kw_only=True, tag=True
):
    """Asynchronous PBT: exploit the top quantile, explore around it.

    Configuration first (see the module docstring), then state: `members` by
    trial id, `rng` (None until the first draw, then the generator after the
    last one) and the two counters `debug_string` reports.

    `take_turns`: whether a perturbed trial pauses for waiting ones (Ray's
    behaviour). None means not said: `with_objective`, which only a new
    experiment calls, makes it True; a log written before the field existed
    decodes with None, which behaves as False, so it replays as it ran.

    Ray's `custom_explore_fn` (its place: the function is asked through the
    shell, see the module docstring), `log_config` (None like `take_turns`:
    a new experiment makes it True, Ray's default, and an older log
    replays without writing policy files), `require_attrs` (accepted, see
    Deviations) and `synch`, whose state is `next_sync` (the barrier; None
    before the first) and `plans` (exploits of waiting trials, by trial id);
    `custom_answers` counts the function's answers.

    `restarts_from_donor`: whether an exploited trial restarts from the
    donor's checkpoint until it saves one of its own (`Exploit`); None like
    `take_turns`, so a log from before replays as it ran.

    `checks_attrs`: whether `require_attrs` holds every result PBT is
    asked about to `time_attr` and the metric (`result_problem`); None like
    `take_turns`, so a log from before, when a result without them was let
    pass, replays as it ran.

    `clones_perturbation_save`: whether a donor's checkpoint is the one
    PBT asked it to save at its own last perturbation, as Ray's
    (`PopulationMember.saved_at`, `PlannedExploit.donor_saved_at`), and an
    exploit given up is no perturbation (`exploits_given_up`); None like
    `take_turns`: a log from before, when the donor's newest persistent
    checkpoint was cloned and synchronous PBT counted every plan, replays
    as it ran. `exploits_given_up` counts the planned exploits given up, so
    the key of the values PBT asks for moves on as it did.
    """

    time_attr: str = "time_total_s"
    metric: str | None = None
    mode: ModeArg | None = None
    perturbation_interval: float = 60.0
    burn_in_period: float = 0.0
    if TYPE_CHECKING:
        hyperparam_mutations: Mapping[str, MutationSpec] = {}
    else:
        hyperparam_mutations: dict[str, list[JsonValue] | MutationFunction | D_co] = {}
    quantile_fraction: float = 0.25
    resample_probability: float = 0.25
    perturbation_factors: tuple[float, ...] = (1.2, 0.8)
    seed: int = 0
    members: dict[str, PopulationMember] = {}
    rng: Rng | None = None
    num_checkpoints: int = 0
    num_perturbations: int = 0
    drawn: dict[str, JsonValue] | UnsetType = UNSET
    take_turns: bool | None = None
    if TYPE_CHECKING:
        custom_explore_fn: Callable[[JsonDict], JsonDict] | MutationFunction | None = None
    else:
        custom_explore_fn: MutationFunction | None = None
    log_config: bool | None = None
    require_attrs: bool = True
    synch: bool = False
    next_sync: float | None = None
    plans: dict[str, PlannedExploit] = {}
    custom_answers: int = 0
    restarts_from_donor: bool | None = None
    checks_attrs: bool | None = None
    clones_perturbation_save: bool | None = None
    exploits_given_up: int = 0

    def __post_init__(self) -> None:
        owner = type(self).__name__  # PB2's errors name PB2
        check_objective_fields(self, self.time_attr, self.metric, self.mode)
        custom: object = self.custom_explore_fn
        if custom is not None and not isinstance(custom, MutationFunction):
            if not callable(custom):
                raise InvalidFieldError(
                    f"{owner}.custom_explore_fn", custom, "a function taking and returning a config"
                )
            msgspec.structs.force_setattr(self, "custom_explore_fn", _function_place(custom))
        for name in ("log_config", "require_attrs", "synch"):
            if not isinstance(getattr(self, name), bool | None):
                raise InvalidFieldError(f"{owner}.{name}", getattr(self, name), "True or False")
        interval = self.perturbation_interval
        require_finite_non_negative(f"{owner}.perturbation_interval", interval)
        if interval == 0:
            raise InvalidFieldError(f"{owner}.perturbation_interval", interval, "a number > 0")
        require_finite_non_negative(f"{owner}.burn_in_period", self.burn_in_period)
        flat = flatten_mutations(self.hyperparam_mutations)
        if not flat and self.custom_explore_fn is None:
            raise InvalidFieldError(
                _MUTATIONS,
                self.hyperparam_mutations,
                "at least one hyperparameter to mutate (or a custom_explore_fn)",
            )
        msgspec.structs.force_setattr(self, "hyperparam_mutations", flat)
        _require_fraction(f"{owner}.quantile_fraction", self.quantile_fraction, 0.5)
        _require_fraction(f"{owner}.resample_probability", self.resample_probability, 1.0)
        factors: object = self.perturbation_factors
        if not isinstance(factors, tuple | list) or not factors:
            raise InvalidFieldError(
                f"{owner}.perturbation_factors", factors, "a non-empty tuple of numbers"
            )
        for factor in factors:
            if not is_number(factor) or not math.isfinite(factor):
                raise InvalidFieldError(
                    f"{owner}.perturbation_factors", factors, "finite numbers only"
                )
        msgspec.structs.force_setattr(self, "perturbation_factors", tuple(factors))
        require_int(f"{owner}.seed", self.seed)
        for name in ("perturbation_interval", "burn_in_period", "quantile_fraction"):
            # Floats, as decoding reads them: a state encodes to the same
            # bytes before and after a resume.
            msgspec.structs.force_setattr(self, name, float(getattr(self, name)))

    @property
    def metric_required(self) -> bool:
        """`require_attrs`: a result without the metric fails the trial even
        when the metric is Ray's anonymous `_metric`, which strict metric
        checking otherwise passes over (`core.policies.checked_metric`;
        Ray's PBT raises `RuntimeError` and the run fails)."""
        return self.require_attrs

    def with_objective(self, metric: str | None, mode: Mode | None) -> Self:
        """Fill in the experiment's metric and mode where none was given;
        PBT cannot rank trials without both. A new experiment is the only
        caller, so `take_turns`, `log_config` and `restarts_from_donor` are
        settled here too (see the class)."""
        adopted = adopt_objective(self, (self.metric, self.mode), metric, mode)
        if adopted.take_turns is None:
            adopted = evolve(adopted, take_turns=True)
        if adopted.log_config is None:
            adopted = evolve(adopted, log_config=True)
        if adopted.restarts_from_donor is None:
            adopted = evolve(adopted, restarts_from_donor=True)
        if adopted.checks_attrs is None:
            adopted = evolve(adopted, checks_attrs=True)
        if adopted.clones_perturbation_save is None:
            adopted = evolve(adopted, clones_perturbation_save=True)
        return adopted

    def result_problem(self, result: JsonDict) -> str | None:
        """Under `require_attrs`, Ray's PBT's `RuntimeError` for a result
        it is asked about without `time_attr` (first) or the metric, which
        the trial fails with (`core.policies.result_problem`); None when
        the result has both, or nothing is required."""
        if not (self.require_attrs and self.checks_attrs):
            return None
        for kind, name in (("time_attr", self.time_attr), ("metric", self.metric)):
            if name is not None and name not in result:
                return (
                    f"Cannot find {kind} {name} in trial result {result}. Make sure that this "
                    "attribute is returned in the results of your Trainable.If this error is "
                    "expected, you can change this to a warning message by setting "
                    "PBT(require_attrs=False)"
                )
        return None

    def on_trial_add(self, trial: TrialState) -> Self:
        """Remember the trial's tag and config; fail now, as Ray does, when
        the objective is missing."""
        require_objective(type(self).__name__, self.metric, self.mode)
        members = {**self.members, trial.trial_id: _new_member(trial)}
        return evolve(self, members=members)

    def on_trial_result(
        self, trial: TrialState, result: JsonDict, trials: Mapping[str, TrialState]
    ) -> tuple[Self, Verdict]:
        """Perturb the trial when its interval is up: checkpoint it in the
        upper quantile, exploit a donor in the lower one; pause it then if
        it takes turns with waiting trials. Synchronous PBT pauses it
        instead until the whole population reached the interval
        (`_synchronize`)."""
        metric, mode = require_objective(type(self).__name__, self.metric, self.mode)
        time = result.get(self.time_attr)
        value = result.get(metric)
        if not (is_finite_number(time) and is_finite_number(value)):
            return self, CONTINUE
        now = float(time)
        trial_id = trial.trial_id
        member = self.members.get(trial_id)
        if member is None:
            member = _new_member(trial)
        if now < self.burn_in_period:
            return self, CONTINUE
        if now - member.last_perturbation_time < self.perturbation_interval:
            return self, CONTINUE
        score = signed(float(value), mode)
        if self.synch:
            member = msgspec.structs.replace(member, last_score=score, last_train_time=now)
            return self._synchronous(trial_id, member, now, iteration_of(result), trials)
        member = msgspec.structs.replace(member, last_score=score, last_perturbation_time=now)
        members = {**self.members, trial_id: member}
        policy = self._scored(trial_id, member)
        scored = [
            (member_id, m.last_score)
            for member_id, m in members.items()
            if m.last_score is not None and _is_live(member_id, m, trial_id, trials)
        ]
        lower, upper = quantiles(scored, self.quantile_fraction)
        if self.clones_perturbation_save:
            saved_at = iteration_of(result) if trial_id in upper else None
            members[trial_id] = msgspec.structs.replace(member, saved_at=saved_at)
        decision = Decision.PAUSE if self._others_wait(trial_id, trials) else Decision.CONTINUE
        if trial_id in upper:
            pbt = msgspec.structs.replace(
                policy, members=members, num_checkpoints=self.num_checkpoints + 1
            )
            return pbt, Verdict(decision=decision, checkpoint=True)
        if trial_id not in lower:
            return evolve(policy, members=members), Verdict(decision=decision)
        rng, index = integer_below(self._rng(), len(upper))
        donor_id = upper[index]
        checkpoint = self._donated(trials.get(donor_id), members[donor_id].saved_at)
        if checkpoint is None:
            return evolve(policy, members=members, rng=rng), Verdict(decision=decision)
        policy, rng, plan = policy._plan(trial_id, donor_id, members, rng, trials)
        plan = msgspec.structs.replace(plan, restore_from=checkpoint)
        members[trial_id] = _exploiting(members[trial_id], members[donor_id], plan.config)
        pbt = msgspec.structs.replace(
            policy,
            members=members,
            rng=rng,
            num_perturbations=self.num_perturbations + 1,
            drawn=UNSET,  # used: the functions are asked again
        )
        if self.custom_explore_fn is not None:
            # The user's function answers through the shell; the trial
            # waits for it (`waiting_exploits`).
            pbt = evolve(pbt, plans={**self.plans, trial_id: plan})
            return pbt, Verdict(decision=Decision.PAUSE)
        exploit = pbt._exploit_of(trial_id, plan, checkpoint, trials)
        return pbt, Verdict(decision=decision, exploit=exploit)

    def _plan(
        self,
        trial_id: str,
        donor_id: str,
        members: Mapping[str, PopulationMember],
        rng: Rng,
        trials: Mapping[str, TrialState] | None,
    ) -> tuple[Self, Rng, PlannedExploit]:
        """The explore step for `trial_id` taking `donor_id`'s place, as a
        plan (its checkpoint to be filled in), the generator after it, and
        the policy after it."""
        member, donor = members[trial_id], members[donor_id]
        policy, rng, config = self._explored(trial_id, donor_id, donor.config, rng)
        plan = PlannedExploit(
            donor_id=donor_id,
            config=config,
            experiment_tag=perturbed_tag(member.original_tag, config, self.hyperparam_mutations),
            previous=member,
            awaiting_custom=self.custom_explore_fn is not None,
            trial_iteration=_iteration_of(trials, trial_id),
            donor_iteration=_iteration_of(trials, donor_id),
        )
        return policy, rng, plan

    def _exploit_of(
        self,
        trial_id: str,
        plan: PlannedExploit,
        checkpoint: CheckpointRef,
        trials: Mapping[str, TrialState],
    ) -> Exploit:
        """The exploit `plan` makes, with its policy line when logged."""
        record = None
        if self.log_config:
            trial_iteration = plan.trial_iteration
            donor_iteration = plan.donor_iteration
            record = RecordExploit(
                trial_id=trial_id,
                donor_id=plan.donor_id,
                trial_tag=plan.previous.original_tag,
                donor_tag=self.members[plan.donor_id].original_tag,
                trial_iteration=(
                    trial_iteration
                    if trial_iteration is not None
                    else (_iteration_of(trials, trial_id) or 0)
                ),
                donor_iteration=(
                    donor_iteration
                    if donor_iteration is not None
                    else (_iteration_of(trials, plan.donor_id) or 0)
                ),
                donor_config=self.members[plan.donor_id].config,
                config=plan.config,
            )
        return Exploit(
            donor_id=plan.donor_id,
            config=plan.config,
            experiment_tag=plan.experiment_tag,
            restore_from=checkpoint,
            record=record,
            restarts_from_donor=self.restarts_from_donor is not False,
        )

    # -- synchronous PBT ----------------------------------------------------

    def _donated(self, donor: TrialState | None, saved_at: int | None) -> CheckpointRef | None:
        """The checkpoint a donor gives (None: the exploit is skipped). As
        Ray's (`clones_perturbation_save`): the save PBT asked for at its
        last perturbation (`saved_at`, None when it was no top trial then);
        before: its newest persistent checkpoint, if it holds state."""
        if donor is None:
            return None
        if not self.clones_perturbation_save:
            return donor_checkpoint(donor.checkpoints)
        if saved_at is None:
            return None
        return perturbation_checkpoint(donor.checkpoints, saved_at)

    def _synchronous(
        self,
        trial_id: str,
        member: PopulationMember,
        now: float,
        iteration: int,
        trials: Mapping[str, TrialState],
    ) -> tuple[Self, Verdict]:
        """Ray's `synch=True`: a trial at its interval pauses, saving a
        persistent checkpoint (any may be a donor); the last one of the
        population to get there perturbs everyone (`_synchronize`) and
        pauses too; `choose_trial_to_run` then starts them again."""
        members = {**self.members, trial_id: member}
        policy = evolve(self._scored(trial_id, member), members=members)
        barrier = policy._barrier()
        behind = any(
            m.last_train_time < barrier
            for member_id, m in members.items()
            if member_id != trial_id and _is_live(member_id, m, trial_id, trials)
        )
        if behind:
            return policy, Verdict(decision=Decision.PAUSE, checkpoint=True)
        policy, upper = policy._synchronize(now, trial_id, trials, iteration)
        return policy, Verdict(decision=Decision.PAUSE, checkpoint=trial_id in upper)

    def _barrier(self) -> float:
        """The time every live trial must reach before the next perturbation
        (Ray's `_next_perturbation_sync`)."""
        if self.next_sync is not None:
            return self.next_sync
        return max(self.perturbation_interval, self.burn_in_period)

    def _synchronize(
        self,
        now: float,
        reporting_id: str | None,
        trials: Mapping[str, TrialState] | None,
        reporting_iteration: int | None = None,
    ) -> tuple[Self, tuple[str, ...]]:
        """Perturb the whole population at once, as Ray does: rank the live
        trials, move every one's perturbation time to `now`, count the upper
        quantile's checkpoints (saved as they paused) and plan an exploit of
        a random upper trial for each lower one, in Ray's order (upper,
        others, lower); then move the barrier on. Returns the policy and the
        upper quantile. `trials` is None when a trial's end completed the
        barrier (the hooks that say so see no other trial). A plan whose
        donor is the reporting trial clones its save on the result of
        `reporting_iteration` (`PlannedExploit.donor_saved_at`)."""

        def live(member_id: str, member: PopulationMember) -> bool:
            if trials is None or reporting_id is None:
                return not member.finished
            return _is_live(member_id, member, reporting_id, trials)

        members = dict(self.members)
        scored = [
            (member_id, m.last_score)
            for member_id, m in members.items()
            if m.last_score is not None and live(member_id, m)
        ]
        lower, upper = quantiles(scored, self.quantile_fraction)
        for member_id, m in members.items():
            if live(member_id, m):
                members[member_id] = msgspec.structs.replace(m, last_perturbation_time=now)
        policy = evolve(self, members=members, num_checkpoints=self.num_checkpoints + len(upper))
        rng = self.rng
        plans = dict(self.plans)
        for member_id in lower:
            rng, index = integer_below(rng if rng is not None else self._rng(), len(upper))
            donor_id = upper[index]
            policy, rng, plan = policy._plan(member_id, donor_id, members, rng, trials)
            if self.clones_perturbation_save and donor_id == reporting_id:
                plan = msgspec.structs.replace(plan, donor_saved_at=reporting_iteration)
            plans[member_id] = plan
            members[member_id] = _exploiting(members[member_id], members[donor_id], plan.config)
            policy = evolve(
                policy,
                members=dict(members),
                num_perturbations=policy.num_perturbations + 1,
                drawn=UNSET,
            )
        latest = max((m.last_train_time for m in members.values()), default=0.0)
        barrier = max(self._barrier() + self.perturbation_interval, latest)
        return evolve(policy, rng=rng, plans=plans, next_sync=barrier), upper

    def _after_finish(self) -> Self:
        """Synchronous PBT: a trial's end may leave every live trial at the
        barrier, with nobody left to report: perturb them now."""
        if not self.synch:
            return self
        barrier = self._barrier()
        live = [m for m in self.members.values() if not m.finished]
        if not live or any(m.last_train_time < barrier for m in live):
            return self
        now = max(m.last_train_time for m in live)
        return self._synchronize(now, None, None)[0]

    # -- exploits of waiting trials (`ExploitsWaiting`) -----------------------

    def waiting_exploits(
        self, trials: Mapping[str, TrialState]
    ) -> tuple[tuple[str, Exploit | None], ...]:
        """The planned exploits whose trial waits with no save in flight and
        whose donor's checkpoint is known (None: given up, the trial ended
        or the donor has no checkpoint); those still waiting for the user's
        `custom_explore_fn` are not ready."""
        if not self.plans:
            return ()
        ready: list[tuple[str, Exploit | None]] = []
        for trial_id, plan in self.plans.items():
            if plan.awaiting_custom:
                continue
            trial = trials.get(trial_id)
            if trial is None or trial.is_finished:
                ready.append((trial_id, None))
                continue
            if trial.status not in _WAITING or trial.saving_to:
                continue
            checkpoint = plan.restore_from
            if checkpoint is None:
                donor = trials.get(plan.donor_id)
                if donor is not None and donor.saving_to:
                    continue
                if plan.donor_saved_at is not None:
                    checkpoint = self._donated(donor, plan.donor_saved_at)
                else:  # a donor that waited at the barrier: its newest with state
                    checkpoint = None if donor is None else donor_checkpoint(donor.checkpoints)
            if checkpoint is None:
                ready.append((trial_id, None))
                continue
            ready.append((trial_id, self._exploit_of(trial_id, plan, checkpoint, trials)))
        return tuple(ready)

    def on_waiting_exploit(self, trial_id: str, exploit: Exploit | None) -> Self:
        """The exploit is done (or given up: the trial keeps its member)."""
        plan = self.plans.get(trial_id)
        if plan is None:
            return self
        plans = {other: p for other, p in self.plans.items() if other != trial_id}
        policy = self
        if exploit is None and self.synch and self.clones_perturbation_save:
            # Ray counts the exploits made (`_exploit`), not those planned
            # at the barrier.
            policy = evolve(
                self,
                num_perturbations=self.num_perturbations - 1,
                exploits_given_up=self.exploits_given_up + 1,
            )
        member = self.members.get(trial_id)
        if exploit is not None or member is None or member.finished:
            return evolve(policy, plans=plans)
        return evolve(policy, plans=plans, members={**self.members, trial_id: plan.previous})

    def _scored(self, trial_id: str, member: PopulationMember) -> Self:
        """This policy once `member` (the trial's, as just scored at its
        perturbation) is known: PBT keeps nothing beside the member; PB2
        (a subclass) notes the data point its model fits."""
        del trial_id, member
        return self

    def _explored(
        self, trial_id: str, donor_id: str, donor_config: JsonDict, rng: Rng
    ) -> tuple[Self, Rng, JsonDict]:
        """The explore step: the config `trial_id` takes from the donor,
        the generator after its draws, and this policy after the step.
        PBT perturbs the mutated values (`explore`); PB2 chooses them by
        its model."""
        del trial_id, donor_id
        rng, config = explore(
            donor_config,
            self.hyperparam_mutations,
            rng,
            resample_probability=self.resample_probability,
            perturbation_factors=self.perturbation_factors,
            drawn=None if isinstance(self.drawn, UnsetType) else self.drawn,
        )
        return self, rng, config

    def choose_trial_to_run(
        self, pending: Sequence[TrialState], paused: Sequence[TrialState], fits: Fits
    ) -> str | None:
        """Taking turns: the waiting trial with the least training (its last
        perturbation time, 0 before the first), the earliest added on a tie,
        among those that fit and have no save in flight. Otherwise FIFO.
        Synchronous PBT, as Ray: only trials behind the barrier, the least
        trained (`last_train_time`) first. Never a trial with a planned
        exploit, nor the donor of one whose checkpoint is not chosen yet."""
        if self.plans:
            held = {*self.plans, *(p.donor_id for p in self.plans.values() if not p.restore_from)}
            free = fits

            def fits(trial: TrialState) -> bool:
                return trial.trial_id not in held and free(trial)

        if self.synch:
            barrier = self._barrier()
            return self._least_trained(
                pending, paused, fits, lambda m: m.last_train_time, below=barrier
            )
        if not self.take_turns:
            return first_fitting(pending, paused, fits)
        return self._least_trained(pending, paused, fits, lambda m: m.last_perturbation_time)

    def _least_trained(
        self,
        pending: Sequence[TrialState],
        paused: Sequence[TrialState],
        fits: Fits,
        trained: Callable[[PopulationMember], float],
        below: float = math.inf,
    ) -> str | None:
        """The waiting trial that fits, has no save in flight and the least
        `trained` (0 for a trial PBT does not know), under `below`; the
        earliest added on a tie."""
        order = {trial_id: index for index, trial_id in enumerate(self.members)}

        def training(trial_id: str) -> float:
            member = self.members.get(trial_id)
            return 0.0 if member is None else trained(member)

        candidates = [
            trial
            for trial in (*pending, *paused)
            if not trial.saving_to and fits(trial) and training(trial.trial_id) < below
        ]
        if not candidates:
            return None
        least = min(
            candidates,
            key=lambda trial: (training(trial.trial_id), order.get(trial.trial_id, len(order))),
        )
        return least.trial_id

    def on_trial_complete(self, trial: TrialState, result: JsonDict) -> Self:
        del result
        return self._finish(trial)

    def on_trial_error(self, trial: TrialState) -> Self:
        return self._finish(trial)

    def on_trial_remove(self, trial: TrialState) -> Self:
        return self._finish(trial)

    @property
    def explore_function(self) -> Callable[[JsonDict], object] | None:
        """`custom_explore_fn`, for the shell; None once decoded."""
        place = self.custom_explore_fn
        if not isinstance(place, MutationFunction):
            return None
        return cast(Callable[[JsonDict], object] | None, place.func)

    @property
    def functions(self) -> dict[Path, Callable[[], object]]:
        """The mutation functions by path, for the shell; empty once
        decoded (functions are not data)."""
        return {
            tuple(path.split("/")): spec.func
            for path, spec in self._flat().items()
            if isinstance(spec, MutationFunction) and spec.func is not None
        }

    def wanted(self) -> ValuesWanted | None:
        """`custom_explore_fn`'s answer for the first plan waiting for it
        (keyed by `-1 - custom_answers`); else the mutation functions whose
        value is not ready (see the module docstring), keyed by
        `num_perturbations`, which an exploit moves on."""
        for plan in self.plans.values():
            if plan.awaiting_custom:
                key = -1 - self.custom_answers
                return ValuesWanted(key=key, paths=(CUSTOM_EXPLORE_PATH,), config=plan.config)
        ready = {} if isinstance(self.drawn, UnsetType) else self.drawn
        missing = tuple(
            tuple(path.split("/"))
            for path, spec in self._flat().items()
            if isinstance(spec, MutationFunction) and path not in ready
        )
        if not missing:
            return None
        # Every exploit planned moves the key on, whether made or given up.
        return ValuesWanted(key=self.num_perturbations + self.exploits_given_up, paths=missing)

    def with_values(self, key: int, values: Sequence[JsonValue]) -> Self:
        """Hold the values `wanted()` asked for."""
        wanted = self.wanted()
        if wanted is None or wanted.key != key or len(values) != len(wanted.paths):
            raise InvalidFieldError(f"{_OWNER}.drawn", list(values), f"the values {wanted!r} asks")
        if wanted.paths == (CUSTOM_EXPLORE_PATH,):
            return self._explored_by_user(values[0])
        ready = {} if isinstance(self.drawn, UnsetType) else self.drawn
        paths = ("/".join(str(part) for part in path) for path in wanted.paths)
        given = dict(zip(paths, values, strict=True))
        return evolve(self, drawn={**ready, **given})

    def _explored_by_user(self, config: JsonValue) -> Self:
        """The first plan waiting for `custom_explore_fn` takes its answer
        as its config (and its perturbed tag from it)."""
        if not isinstance(config, dict):
            raise InvalidFieldError(
                f"{_OWNER}.custom_explore_fn", config, "a function returning the config dict"
            )
        trial_id, plan = next((i, p) for i, p in self.plans.items() if p.awaiting_custom)
        tag = perturbed_tag(plan.previous.original_tag, config, self.hyperparam_mutations)
        answered = msgspec.structs.replace(
            plan, config=config, experiment_tag=tag, awaiting_custom=False
        )
        members = dict(self.members)
        if trial_id in members:
            members[trial_id] = msgspec.structs.replace(members[trial_id], config=config)
        return evolve(
            self,
            plans={**self.plans, trial_id: answered},
            members=members,
            custom_answers=self.custom_answers + 1,
        )

    def debug_string(self) -> str:
        return (
            f"PopulationBasedTraining: {self.num_checkpoints} checkpoints, "
            f"{self.num_perturbations} perturbs"
        )

    def _flat(self) -> FlatMutations:
        """`hyperparam_mutations`, which construction flattened."""
        return cast(FlatMutations, self.hyperparam_mutations)

    def _others_wait(self, trial_id: str, trials: Mapping[str, TrialState]) -> bool:
        """Whether the reporting trial should pause for another: only when
        taking turns, and another trial is PENDING or PAUSED."""
        if not self.take_turns:
            return False
        return any(
            other.status in _WAITING for other_id, other in trials.items() if other_id != trial_id
        )

    def _rng(self) -> Rng:
        return self.rng if self.rng is not None else seeded(self.seed)

    def _finish(self, trial: TrialState) -> Self:
        """A finished trial leaves the ranking (Ray skips finished trials)."""
        member = self.members.get(trial.trial_id)
        if member is None:
            member = _new_member(trial)
        finished = msgspec.structs.replace(member, finished=True)
        return evolve(self, members={**self.members, trial.trial_id: finished})._after_finish()


def quantiles(
    scores: Sequence[tuple[str, float]], fraction: float
) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The (lower, upper) quantiles of `scores` (id, greater-is-better score):
    `k = ceil(n * fraction)` trials each, at most `floor(n / 2)` so the two
    never overlap; none when `n <= 1`. Ties keep the order of `scores`."""
    ranked = [trial_id for trial_id, _ in sorted(scores, key=lambda item: item[1])]
    count = len(ranked)
    if count <= 1:
        return (), ()
    size = math.ceil(count * fraction)
    if size > count / 2:
        size = count // 2
    if size == 0:
        return (), ()
    return tuple(ranked[:size]), tuple(ranked[-size:])


def flatten_mutations(mutations: Mapping[str, MutationSpec]) -> FlatMutations:
    """Mutation specs by '/'-joined path, validated: categories become
    non-empty lists, domains must be msgspec structs with `sample`, nested
    dicts are flattened. Idempotent on its own output. Empty when `mutations`
    is (PBT then needs a `custom_explore_fn`)."""
    given: object = mutations
    if not isinstance(given, Mapping):
        raise InvalidFieldError(_MUTATIONS, given, "a dict of mutation specs")
    return flatten_nested(given, _MUTATIONS, "mutations", "spec", _checked_spec)


def _checked_spec(field: str, spec: object) -> list[JsonValue] | Samplable | MutationFunction:
    """Checks each value at run time: callers may be untyped, and decoded
    data may hold a domain msgspec could not build (a plain dict)."""
    spec = built(spec)
    if isinstance(spec, list | tuple):
        if not spec:
            raise InvalidFieldError(field, spec, "a non-empty list of categories")
        return list(spec)
    if isinstance(spec, MutationFunction) or (
        isinstance(spec, Samplable) and isinstance(spec, msgspec.Struct)
    ):
        return spec
    if callable(spec) and _takes_no_argument(spec):
        return _function_place(spec)
    raise InvalidFieldError(
        field,
        spec,
        "a list of categories, a search domain (a msgspec struct with "
        "sample(rng)), a function of no argument, or a dict of those. "
        "When decoding, name the domain types: PopulationBasedTraining[Domain]",
    )


def flatten_nested(
    given: Mapping[object, object],
    owner: str,
    nested: str,
    one: str,
    leaf: Callable[[str, object], _V],
) -> dict[str, _V]:
    """A user's nested dict (`owner`: the argument, as errors name it) by
    '/'-joined path, each leaf as `leaf` checks it (given the field naming
    it): a key must be a non-empty string, a nested dict of `nested` must
    not be empty, and a path holds one `one`, given nested or joined."""
    flat: dict[str, _V] = {}

    def walk(prefix: str, mapping: Mapping[object, object]) -> None:
        for key, value in mapping.items():
            if not isinstance(key, str) or not key:
                raise InvalidFieldError(f"{owner} key", key, "a non-empty string")
            path = f"{prefix}/{key}" if prefix else key
            field = f"{owner}[{path!r}]"
            if isinstance(value, Mapping):
                if not value:
                    raise InvalidFieldError(field, value, f"a non-empty dict of nested {nested}")
                walk(path, value)
            elif path in flat:
                raise InvalidFieldError(
                    field, value, f"one {one} per path (given nested and '/'-joined)"
                )
            else:
                flat[path] = leaf(field, value)

    walk("", given)
    return flat


def explore(
    config: Mapping[str, JsonValue],
    mutations: Mapping[str, MutationSpec],
    rng: Rng,
    *,
    resample_probability: float,
    perturbation_factors: Sequence[float],
    drawn: Mapping[str, JsonValue] | None = None,
) -> tuple[Rng, JsonDict]:
    """A copy of `config` with every mutated value perturbed, and the
    generator after the draws.

    Per path, in the order of `mutations`, one uniform draw decides
    resampling (`< resample_probability`). Categories: resample uniformly
    (also when the value is not among them), else move one index left or
    right (equal odds), clipped at the ends. Domains: resample with
    `sample(rng)` (also when the value is missing or not a number), else
    multiply by a uniformly chosen factor; an int value stays an int
    (truncated, as Ray's `int()`). Functions: like domains, resampling
    takes the function's value from `drawn` (by path); without one the
    value is only perturbed, or kept when it is not a number.
    """
    ready = drawn or {}
    explored: JsonDict = copy.deepcopy(dict(config))
    for path, spec in flatten_mutations(mutations).items():
        keys = path.split("/")
        found, value = lookup(config, keys)
        rng, draw = random_float(rng)
        resample = draw < resample_probability
        new: JsonValue
        if isinstance(spec, list):
            if resample or not found or value not in spec:
                rng, index = integer_below(rng, len(spec))
            else:
                rng, step = integer_below(rng, 2)
                index = min(max(spec.index(value) + (1 if step else -1), 0), len(spec) - 1)
            new = copy.deepcopy(spec[index])
        else:
            wants_new = resample or not found or not is_number(value)
            if isinstance(spec, MutationFunction) and wants_new and path not in ready:
                if not found or not is_number(value):
                    continue  # no value to keep or perturb, and none drawn
                wants_new = False
            if wants_new and isinstance(spec, MutationFunction):
                new = copy.deepcopy(ready[path])
            elif wants_new:
                assert not isinstance(spec, MutationFunction)
                rng, new = spec.sample(rng)
            else:
                rng, index = integer_below(rng, len(perturbation_factors))
                new = value * perturbation_factors[index]  # type: ignore[operator]
            if is_int(value) and is_finite_number(new):
                new = int(new)
        assign(explored, keys, new)
    return rng, explored


def perturbed_tag(
    original_tag: str, config: Mapping[str, JsonValue], mutations: Mapping[str, MutationSpec]
) -> str:
    """Ray's `{original_tag}@perturbed[{key=value,...}]`, mutated leaves by
    path order, floats to 4 decimals, other values reduced to
    `[a-zA-Z0-9_-]` so the tag can name a directory."""
    return tag_with_values(original_tag, config, flatten_mutations(mutations))


def tag_with_values(
    original_tag: str, config: Mapping[str, JsonValue], paths: Iterable[str]
) -> str:
    """`perturbed_tag` naming the values at `paths` ('/'-joined)."""
    keys_by_path = sorted(tuple(path.split("/")) for path in paths)
    pairs = (
        f"{clean_tag_value(keys[-1])}={clean_tag_value(lookup(config, list(keys))[1])}"
        for keys in keys_by_path
    )
    return f"{original_tag}{PERTURBED}[{','.join(pairs)}]"


_UNSAFE = re.compile(r"[^a-zA-Z0-9_-]+")


def clean_tag_value(value: object) -> str:
    """Ray's spelling of a value in a tag: a float to 4 decimals, anything
    else with each run of characters outside `[a-zA-Z0-9_-]` made one `_`
    and the `_` at either end dropped."""
    if isinstance(value, float):
        return f"{value:.4f}"
    return _UNSAFE.sub("_", str(value)).strip("_")


def lookup(config: Mapping[str, JsonValue], keys: Sequence[str]) -> tuple[bool, JsonValue]:
    """Whether the nested `keys` lead to a value in `config`, and the value."""
    node: JsonValue = dict(config)
    for key in keys:
        if not isinstance(node, dict) or key not in node:
            return False, None
        node = node[key]
    return True, node


def assign(config: JsonDict, keys: Sequence[str], value: JsonValue) -> None:
    """Set a nested value in place, creating (or replacing non-dict)
    intermediate levels; `config` is already a private deep copy."""
    node = config
    for key in keys[:-1]:
        child = node.get(key)
        if not isinstance(child, dict):
            child = {}
            node[key] = child
        node = child
    node[keys[-1]] = value


def _exploiting(
    member: PopulationMember, donor: PopulationMember, config: JsonDict
) -> PopulationMember:
    """The exploiting trial's member: the new config, and the donor's
    times, since restoring the donor's checkpoint moves its clock there."""
    return msgspec.structs.replace(
        member,
        config=config,
        last_perturbation_time=donor.last_perturbation_time,
        last_train_time=donor.last_train_time,
    )


def _iteration_of(trials: Mapping[str, TrialState] | None, trial_id: str) -> int | None:
    """The training iteration of the trial's last recorded result, as
    Ray's policy line has it; None when the trials are not known."""
    if trials is None:
        return None
    trial = trials.get(trial_id)
    iteration = None if trial is None else trial.last_result.get(_ITERATION, 0)
    return int(iteration) if is_int(iteration) else 0


def _new_member(trial: TrialState) -> PopulationMember:
    return PopulationMember(original_tag=trial.spec.experiment_tag, config=trial.spec.config)


def _is_live(
    member_id: str, member: PopulationMember, reporting_id: str, trials: Mapping[str, TrialState]
) -> bool:
    """The reporting trial is running; any other must still be listed by the
    experiment and not finished, by its status or by our own record."""
    if member_id == reporting_id:
        return True
    if member.finished:
        return False
    other = trials.get(member_id)
    return other is not None and not other.is_finished


def _require_fraction(field: str, value: object, high: float) -> None:
    if not is_number(value) or not 0 <= value <= high:
        raise InvalidFieldError(field, value, f"a number between 0 and {high}")
