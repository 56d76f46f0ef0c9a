"""Ray's `ray.air.integrations.keras`: `ReportCheckpointCallback`, the
Keras callback Ray Train documents, for `model.fit(...,
callbacks=[ReportCheckpointCallback()])` in a training function (`pip
install 'tunecore[keras]'`).

Ray's reports through `ray.train.report` and Tune's
(`tunecore.integration.keras.TuneReportCheckpointCallback`) through
`ray.tune.report`; a training function here has one `tunecore.report`, so
the two take the same arguments and do the same: see that module."""

from __future__ import annotations

from tunecore.integration.keras import TuneReportCheckpointCallback


class ReportCheckpointCallback(TuneReportCheckpointCallback):
    """Reports Keras's logs at the hooks `report_metrics_on` names, with a
    checkpoint of the model (`model.keras`) at those `checkpoint_on` names."""


__all__ = ["ReportCheckpointCallback"]
