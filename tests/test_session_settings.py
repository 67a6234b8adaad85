"""Session settings: from the environment and the initialization options (options win), each
bad value ignored with a warning."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from plansight.engine.compaction.compactor import CompactionSettings
from plansight.engine.model import ModelSettings, ThinkingOption, thinking_request
from plansight.protocol.options import InitOptions, Thinking
from plansight.session.settings import DEFAULT_MAX_ROUNDS, SessionSettings
from plansight.session.storage import default_storage_dir

ENV = {
    "ANTHROPIC_API_KEY": "sk-env",
    "ANTHROPIC_BASE_URL": "http://127.0.0.1:9",
    "PLANSIGHT_MODEL": "claude-env-model",
    "PLANSIGHT_API_TIMEOUT": "42",
}


def test_settings_come_from_the_environment_and_the_options_win() -> None:
    options = InitOptions(
        model="claude-option-model",
        max_rounds=7,
        storage_dir="/tmp/plansight-state",
        context_window=150_000,
        compact_at=0.6,
        thinking=Thinking(budget_tokens=2048),
        checkpoints=False,
    )
    settings = SessionSettings.from_options(options, ENV)
    assert settings.model == ModelSettings(
        model="claude-option-model",
        api_key="sk-env",
        base_url="http://127.0.0.1:9",
        timeout=42.0,
        thinking=ThinkingOption(budget_tokens=2048),
    )
    assert settings.max_rounds == 7
    assert settings.storage_dir == Path("/tmp/plansight-state")
    # Version 2's options reach the parts that use them.
    assert settings.compaction == CompactionSettings(context_window=150_000, compact_at=0.6)
    assert settings.model.thinking == ThinkingOption(budget_tokens=2048)
    assert settings.checkpoints is False


def test_without_options_the_environment_and_the_defaults_apply(tmp_path: Path) -> None:
    settings = SessionSettings.from_options(InitOptions(), ENV)
    assert settings.model.model == "claude-env-model"
    assert settings.max_rounds == DEFAULT_MAX_ROUNDS
    assert settings.model.thinking is None and settings.checkpoints is True
    assert settings.compaction == CompactionSettings()  # the window from the Models API, 0.8
    assert settings.store_for(tmp_path).directory == default_storage_dir(tmp_path)
    thinking = SessionSettings.from_options(InitOptions(thinking=Thinking()), {})
    assert thinking.model.thinking == ThinkingOption()  # on, with the default budget
    bare = SessionSettings.from_options(InitOptions(), {})
    assert bare.model == ModelSettings()  # no key, no URL: the SDK's own defaults


@pytest.mark.parametrize("raw", ["soon", "-5", "0", "inf"])
def test_a_bad_api_timeout_is_ignored_with_a_warning(
    raw: str, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.WARNING, logger="plansight.session.settings"):
        settings = SessionSettings.from_options(InitOptions(), {"PLANSIGHT_API_TIMEOUT": raw})
    assert settings.model.timeout == ModelSettings().timeout
    assert f"PLANSIGHT_API_TIMEOUT={raw!r}" in caplog.text


def test_a_thinking_budget_of_zero_is_raised_to_the_minimum_not_replaced_by_the_default() -> None:
    options = InitOptions.parse({"thinking": {"budgetTokens": 0}})
    settings = SessionSettings.from_options(options, {})
    assert settings.model.thinking == ThinkingOption(budget_tokens=0)
    thinking, max_tokens = thinking_request(settings.model.thinking, None, 8192)
    assert thinking == {"type": "enabled", "budget_tokens": 1024} and max_tokens > 1024


def test_protect_control_reaches_the_settings_and_a_bad_item_is_left_out() -> None:
    options = InitOptions.parse(
        {"protect": {"extra": ["*.db"], "control": ["Makefile", 3, "scripts/hooks/"]}}
    )
    settings = SessionSettings.from_options(options, {})
    assert settings.protect.control == ("Makefile", "scripts/hooks/")
    assert settings.protect.extra == ("*.db",) and settings.protect.defaults
    assert any("protect.control" in problem for problem in options.problems)
