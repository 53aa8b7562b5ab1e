"""receiver/signals/deploys.py."""

from __future__ import annotations

import pytest

from model.errors import InvalidInput
from receiver.signals.deploys import handle_deploy
from receiver.signals.outcome import ACCEPTED
from tests.receiver.signals.collect import run


def test_a_deploy_is_handed_on() -> None:
    outcome, (batch,) = run(handle_deploy, {"git_sha": " abc123 ", "env": "production"})
    assert outcome == ACCEPTED
    (deploy,) = batch.deploys
    assert (deploy.git_sha, deploy.env, batch.project_id) == ("abc123", "production", 7)


def test_an_invalid_deploy_hands_nothing_on() -> None:
    with pytest.raises(InvalidInput):
        run(handle_deploy, ["not", "an", "object"])
