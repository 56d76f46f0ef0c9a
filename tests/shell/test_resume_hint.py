"""The `tunecore resume` command messages print (shell.resume_hint): a
shell splits it into exactly the arguments meant, whatever the directory
or URI holds, and `--trainable` is the recorded import path when there is
one."""

from __future__ import annotations

import shlex

from hypothesis import given
from hypothesis import strategies as st

from tunecore.shell.resume_hint import PLACEHOLDER, resume_command_line

PLACES = st.text(st.characters(exclude_characters="\0"), min_size=1)


@given(where=PLACES, address=st.none() | PLACES)
def test_a_shell_splits_the_command_into_the_arguments_meant(
    where: str, address: str | None
) -> None:
    words = shlex.split(resume_command_line(where, "train:objective", address))
    expected = ["tunecore", "resume", where, "--trainable", "train:objective"]
    assert words == expected + ([] if address is None else ["--address", address])


def test_a_uri_with_a_query_stays_one_argument() -> None:
    uri = "s3://bucket/runs/exp?endpoint_override=host:9000&scheme=http"
    command = resume_command_line(uri, "pkg.train:fit")
    assert command == f"tunecore resume '{uri}' --trainable pkg.train:fit"


def test_a_name_with_no_import_path_leaves_the_placeholder() -> None:
    """A function of the script that was run (`__main__`) or a registered
    name: the command line cannot import it, so the user names the module."""
    for recorded in ("objective", None):
        assert resume_command_line("/runs/exp", recorded).endswith(f"--trainable {PLACEHOLDER}")
