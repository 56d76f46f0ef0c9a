# mypy: ignore-errors
# requires: pytorch_lightning, torch
# timeout: 300
"""A user's Lightning callback overriding `_handle` of Ray's
`TuneReportCallback` (a tuning helper in a public NLP toolkit, written for
PyTorch Lightning 1.x): it reports tensors and numbers alike, and skips
Lightning's sanity check through `trainer.running_sanity_check`, an
attribute Lightning 2 no longer has.

Ray Tune 2.60 calls the override at each hook `on=` names, so with
Lightning 2 every trial fails there with AttributeError (checked on Ray
Tune 2.60 with Lightning 2.6: both trials ERROR, no result). tunecore
called its own reporting instead and ignored the override (both trials
passed) until its callbacks dispatched to `_handle` as Ray's do.

Only the model and data are stand-ins (a linear regression on random
data), and 2 epochs.
"""

import pytorch_lightning as pl
import torch
from pytorch_lightning import LightningModule, Trainer
from torch import Tensor

import tunecore as tune
from tunecore.integration import pytorch_lightning as tune_pl


class TuneReportCallback(tune_pl.TuneReportCallback):
    def _handle(self, trainer: Trainer, pl_module: LightningModule):
        # Don't report if just doing initial validation sanity checks.
        if trainer.running_sanity_check:
            return
        if not self._metrics:
            report_dict = {
                k: v.item() if isinstance(v, Tensor) else v
                for k, v in trainer.callback_metrics.items()
            }
        else:
            report_dict = {}
            for key in self._metrics:
                metric = self._metrics[key] if isinstance(self._metrics, dict) else key
                v = trainer.callback_metrics[metric]
                report_dict[key] = v.item() if isinstance(v, Tensor) else v
        tune.report(report_dict)


class Model(pl.LightningModule):
    def __init__(self, lr):
        super().__init__()
        self.lr = lr
        self.layer = torch.nn.Linear(4, 1)

    def training_step(self, batch, _):
        x, y = batch
        return torch.nn.functional.mse_loss(self.layer(x), y)

    def validation_step(self, batch, _):
        x, y = batch
        self.log("val_loss", torch.nn.functional.mse_loss(self.layer(x), y))

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=self.lr)


def loader():
    g = torch.Generator().manual_seed(0)
    x = torch.randn(32, 4, generator=g)
    y = x.sum(dim=1, keepdim=True)
    return torch.utils.data.DataLoader(torch.utils.data.TensorDataset(x, y), batch_size=8)


def train_fn(config):
    trainer = pl.Trainer(
        max_epochs=2,
        logger=False,
        enable_progress_bar=False,
        enable_checkpointing=False,
        callbacks=[TuneReportCallback({"loss": "val_loss"}, on="validation_end")],
    )
    trainer.fit(Model(config["lr"]), loader(), loader())


analysis = tune.run(
    train_fn,
    config={"lr": tune.grid_search([0.01, 0.1])},
    metric="loss",
    mode="min",
    raise_on_failed_trial=False,
)

assert sorted(t.status for t in analysis.trials) == ["ERROR", "ERROR"]
for trial in analysis.trials:
    with open(trial.error_file) as error:
        assert "object has no attribute 'running_sanity_check'" in error.read()
    assert "loss" not in trial.last_result
