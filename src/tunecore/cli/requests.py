"""`tunecore stop` and `tunecore add`: requests to a running experiment,
posted to its inbox (in its directory, or in storage for a URI), which the
running loop reads and logs like any other event."""

from __future__ import annotations

import argparse
import dataclasses
import json
from collections.abc import Callable
from pathlib import Path
from typing import NoReturn

from tunecore.api.config import SyncConfig
from tunecore.cli.common import as_given, experiment_dir, is_uri
from tunecore.cli.errors import EXIT_OK, CliError
from tunecore.cli.paths import experiment_to_write
from tunecore.core.experiment import ExperimentState, trials_in_order
from tunecore.core.search.fitting import misfit, searched_space
from tunecore.model import JsonDict, TrialState, TrialStatus
from tunecore.model.storable import UnstorableValueError, check_storable
from tunecore.shell.driver_state import driver_of
from tunecore.shell.eventlog import LogError, read_header
from tunecore.shell.inbox import AddTrialRequest, Inbox, Request, StopTrialRequest, post_to_store
from tunecore.shell.mirror.remote import open_stored
from tunecore.shell.progress import spec_name
from tunecore.shell.replay import replay
from tunecore.shell.resume_hint import resume_command_line

_SYNC_PERIOD = f"a sync period ({SyncConfig.model_fields['sync_period'].default:g} s by default)"
_STORED_LAG = f"the stored state is up to {_SYNC_PERIOD} behind the driver"
_NEW_RUN_LAG = (
    f"a running experiment's log reaches its storage up to {_SYNC_PERIOD} after it starts"
)


@dataclasses.dataclass(frozen=True)
class _Inbox:
    """Where `stop` and `add` read an experiment (a local copy for a URI),
    how to name it, and how to post it a request: to the directory's inbox,
    or to the one in storage, which the driver's shipper brings in."""

    local: Path
    shown: str
    post: Callable[[Request], str]
    stored: bool

    def state(self) -> ExperimentState:
        """`_open_experiment`, naming the experiment as the user did."""
        try:
            return _open_experiment(self.local)
        except CliError as error:
            raise CliError(str(error).replace(str(self.local), self.shown), error.code) from None


def _inbox_of(given: str) -> _Inbox:
    if not is_uri(given):
        directory = experiment_dir(given)
        experiment_to_write(directory)
        return _Inbox(directory, str(directory), lambda r: str(Inbox(directory).post(r)), False)
    try:
        stored = open_stored(given)
    except LogError as error:  # nothing yet: a new run's log is shipped after it starts
        raise CliError(f"{error}; {_NEW_RUN_LAG}") from None
    except (OSError, ValueError, ImportError) as error:
        raise CliError(as_given(error, given, "")) from None
    return _Inbox(stored.local, stored.uri, lambda r: post_to_store(stored.store, r), True)


def _open_experiment(directory: Path) -> ExperimentState:
    """The experiment's state from its log; an error if it has ended, since
    nothing would read a request then."""
    state = replay(directory, verify=False, keep_commands=False, quiet=True).state
    if state.done:
        raise CliError(
            f"the experiment in {directory} has ended, so nothing reads requests any more "
            f"(if it was stopped early: {resume_command_line(str(directory))}, then send it again)"
        )
    return state


def _find_trial(state: ExperimentState, given: str) -> TrialState:
    """The trial whose id, or whose name in the status table, is `given`."""
    trial = state.trials.get(given)
    if trial is not None:
        return trial
    trials = trials_in_order(state)
    for candidate in trials:
        if spec_name(candidate) == given:
            return candidate
    if not trials:
        raise CliError(f"there is no trial {given!r}: the experiment has no trials yet")
    known = ", ".join(t.trial_id for t in trials[:5])
    more = f" and {len(trials) - 5} more" if len(trials) > 5 else ""
    raise CliError(f"there is no trial {given!r}; the experiment's trials: {known}{more}")


def _post(inbox: _Inbox, request: Request, what: str) -> int:
    try:
        where = inbox.post(request)
    except OSError as error:  # its inbox is a file, say
        raise CliError(
            f"{inbox.shown}: cannot post the request to {error.filename} ({error.strerror})"
        ) from None
    print(f"Queued {what} ({where}). {_who_takes_it(inbox)}")
    return EXIT_OK


def _who_takes_it(inbox: _Inbox) -> str:
    """When the request is read: soon by the running driver, or by the
    next resume when the driver is gone (the inbox outlives it)."""
    settings = read_header(inbox.local).settings
    driver = driver_of(inbox.shown, inbox.local, settings.sync_period_s)
    if driver is None or driver.running is False:
        return (
            "No driver runs the experiment now: a resume takes the request "
            f"({resume_command_line(inbox.shown)})."
        )
    soon = "within a few seconds" if inbox.stored else "within about a second"
    if driver.running is None:
        return (
            f"Its {driver.describe()} is on another host: if it still runs it takes the "
            f"request {soon}, else a resume does."
        )
    watch = f"tunecore status {inbox.shown} shows the effect"
    return f"The running experiment takes it {soon}; {watch}."


def stop_command(args: argparse.Namespace) -> int:
    inbox = _inbox_of(args.dir)
    try:
        trial = _find_trial(inbox.state(), args.trial)
    except CliError as error:
        if not inbox.stored:
            raise
        raise CliError(f"{error} ({_STORED_LAG})", error.code) from None
    if trial.status in (TrialStatus.TERMINATED, TrialStatus.ERROR):
        print(f"Trial {trial.trial_id} has already ended ({trial.status.value}): nothing to stop.")
        return EXIT_OK
    return _post(inbox, StopTrialRequest(trial_id=trial.trial_id), f"stop {trial.trial_id}")


def add_command(args: argparse.Namespace) -> int:
    inbox = _inbox_of(args.dir)
    config = _config_object(args.config)
    _refuse_misfit(inbox.state(), config)
    request = AddTrialRequest(config=config, experiment_tag=args.tag)
    return _post(inbox, request, f"a trial with config {json.dumps(config)}")


def _refuse_misfit(state: ExperimentState, config: JsonDict) -> None:
    """A config that does not fit the experiment's parameter space (see
    `tunecore.core.search.fitting`) is refused, not queued to fail in the
    trial. A searcher whose space the log does not hold checks nothing."""
    space = searched_space(state.searcher)
    if space is None:
        return
    found = misfit(space, config)
    if found is not None:
        key = "--config" + "".join(f"[{part!r}]" for part in found.path)
        raise CliError(
            f"{key}={found.value!r} does not fit the experiment's parameter space: "
            f"expected {found.expected}"
        )


def _config_object(text: str) -> JsonDict:
    def no_constant(name: str) -> NoReturn:
        raise CliError(f"--config: {name} is not a JSON number")

    try:
        config: object = json.loads(text, parse_constant=no_constant)
    except json.JSONDecodeError as error:
        raise CliError(f"--config {_shown(text)} is not valid JSON: {error}") from None
    except RecursionError:
        raise CliError("--config is nested too deep to read (keep it within 100 levels)") from None
    if not isinstance(config, dict):
        raise CliError(
            f"--config must be a JSON object such as '{{\"lr\": 0.01}}', not {_shown(text)}"
        )
    try:
        check_storable("--config", config)
    except UnstorableValueError as error:
        raise CliError(str(error)) from None
    return config


def _shown(text: str, most: int = 80) -> str:
    """The value given to --config as an error quotes it: in quotes, so an
    empty or blank one shows, and cut short if long."""
    return repr(text if len(text) <= most else text[:most] + "...")
