"""A newcomer's first run against an installed tunecore (`nox -s package`).

Runs the README's "Using it" example as written, then reads its results as
a DataFrame, the two things a user tries first after `pip install`. It is
run from a directory outside the clone, with the README's path as its only
argument, so it proves the installed package (not the source tree) works.
"""

from __future__ import annotations

import sys
from pathlib import Path


def using_it_example(readme: str) -> str:
    """The first ```python block of the README's "Using it" section."""
    section = readme.split("\n## Using it", 1)[1]
    return section.split("```python\n", 1)[1].split("```", 1)[0]


def main() -> None:
    import tunecore  # noqa: PLC0415 - imported after the path check below

    installed = Path(tunecore.__file__).resolve()
    clone = Path(sys.argv[1]).resolve().parent
    if clone in installed.parents:
        raise SystemExit(f"tunecore was imported from the clone ({installed}), not the install")
    namespace: dict[str, object] = {"__name__": "__main__"}
    example = using_it_example(Path(sys.argv[1]).read_text(encoding="utf-8"))
    exec(compile(example, "README.md: Using it", "exec"), namespace)
    results = namespace["results"]
    if not isinstance(results, tunecore.ResultGrid):
        raise SystemExit(f"the README's example left `results` as {results!r}, not a ResultGrid")
    frame = results.get_dataframe()
    trials = len(results)
    if len(frame) != trials or frame["trial_id"].isna().any():
        raise SystemExit(f"get_dataframe() gave {len(frame)} rows for {trials} trials:\n{frame}")
    print(f"first_run: the README's example ran {trials} trials from {installed.parent}")


if __name__ == "__main__":
    main()
