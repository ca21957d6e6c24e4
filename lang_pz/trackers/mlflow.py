"""MLflow (``pip install 'lang_pz[mlflow]'``, the ``mlflow-skinny`` client). A folder is MLflow's
file store, written on this machine (``mlflow ui --backend-store-uri DIR`` shows it); an
``http(s)://`` URI is a tracking server, and a ``sqlite:///`` or other database URI is passed to
MLflow as it is. Credentials for a server come from MLflow's own environment variables
(``MLFLOW_TRACKING_TOKEN``, ...), never from lang_pz's files.

MLflow 3 keeps the file store in maintenance mode and refuses it unless
``MLFLOW_ALLOW_FILE_STORE`` is set; a folder given here is the file store on purpose, so the
tracker sets that variable (unless the user set it) for this process. MLflow 3 also sends anonymous
usage telemetry by default; lang_pz sends nothing but to the endpoints a user configures, so the
tracker turns it off (``MLFLOW_DISABLE_TELEMETRY``) unless the user set that variable.
"""

from __future__ import annotations

import os
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from lang_pz.error import DependencyNotInstalled
from lang_pz.trackers.base import Tracker, config_text

#: URI schemes passed to MLflow unchanged (anything else is a folder of the file store).
URI_SCHEMES = ("http://", "https://", "file:", "sqlite:", "postgresql", "mysql", "mssql", "databricks")

#: MLflow's limit on a parameter value (characters); longer values are cut, the whole config is an artifact.
PARAM_CHARS = 6000


def tracking_uri(where: str | Path) -> str:
    """The MLflow tracking URI of ``where``: a URI as it is, a folder as an absolute ``file:`` URI."""
    text = str(where)
    if text.startswith(URI_SCHEMES):
        return text
    return Path(text).expanduser().resolve().as_uri()


class MlflowTracker(Tracker):
    """One MLflow run: metrics with each x axis (``episode``, ``iteration``, ``seed``) as the step,
    texts (policies, tables) as artifacts ``TAG/AXIS_STEP.txt``, the configuration as parameters
    (and whole, as ``config.json``).

    Args:
        where: a folder (the file store) or a tracking URI.
        config: the run's configuration.
        experiment: the MLflow experiment, created if missing.

    Raises:
        DependencyNotInstalled: mlflow-skinny is not installed.
    """

    def __init__(self, where: str | Path, config: Mapping[str, Any] | None = None, experiment: str = "lang_pz") -> None:
        super().__init__(config)
        os.environ.setdefault("MLFLOW_DISABLE_TELEMETRY", "true")  # before mlflow is imported
        try:
            from mlflow.entities import Metric, Param
            from mlflow.tracking import MlflowClient
        except ImportError as exc:
            raise DependencyNotInstalled("--log mlflow:DIR needs mlflow-skinny: pip install 'lang_pz[mlflow]'") from exc
        self.uri = tracking_uri(where)
        if self.uri.startswith("file:"):
            Path(self.uri.removeprefix("file://")).mkdir(parents=True, exist_ok=True)
            os.environ.setdefault("MLFLOW_ALLOW_FILE_STORE", "true")
        self._metric = Metric
        self.client = MlflowClient(tracking_uri=self.uri)
        found = self.client.get_experiment_by_name(experiment)
        experiment_id = found.experiment_id if found is not None else self.client.create_experiment(experiment)
        self.run_id: str = self.client.create_run(experiment_id).info.run_id
        if self.config:
            params = [Param(str(k)[:250], str(v)[:PARAM_CHARS]) for k, v in self.config.items()]
            for i in range(0, len(params), 100):  # MLflow takes at most 100 parameters per batch
                self.client.log_batch(self.run_id, params=params[i : i + 100])
            self.client.log_text(self.run_id, config_text(self.config), "config.json")

    def scalars(self, axis: str, step: int, values: Mapping[str, float]) -> None:
        now = int(time.time() * 1000)
        metrics = [self._metric(k, float(v), now, int(step)) for k, v in values.items()]
        for i in range(0, len(metrics), 1000):  # MLflow's batch limit
            self.client.log_batch(self.run_id, metrics=metrics[i : i + 1000])

    def text(self, axis: str, step: int, tag: str, text: str) -> None:
        self.client.log_text(self.run_id, text, f"{tag}/{axis}_{step}.txt")

    def close(self) -> None:
        """End the run (status FINISHED)."""
        self.client.set_terminated(self.run_id)
