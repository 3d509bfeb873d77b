"""The Action's environment: what `benchbot github` reads from its variables.

``ActionEnv.from_env`` reads the ``GITHUB_*`` variables Actions sets and the
``BENCHBOT_*`` ones the composite action sets from its inputs (an empty value means
"not given", as an unset action input arrives empty). The inputs that are settings
(runs, budget, fail-on) are read as the command line reads them, into an ``Overrides``.
Nothing here calls the API or git.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from benchbot.config.settings import Overrides, SettingError, check_design, read, switch
from benchbot.core.errors import UsageError
from benchbot.core.model import Shard
from benchbot.github.output import DEFAULT_ARTIFACT

if TYPE_CHECKING:
    from benchbot.config.config import Config

Mode = Literal["all", "gate", "measure", "publish"]
MODES: tuple[Mode, ...] = ("all", "gate", "measure", "publish")
MEASURE_RESULTS = ("success", "failure", "cancelled", "skipped")
DEFAULT_API_URL = "https://api.github.com"
DEFAULT_SERVER_URL = "https://github.com"
DEFAULT_HISTORY_BRANCH = "benchbot-history"


@dataclass(frozen=True, slots=True, kw_only=True)
class ActionEnv:
    """Everything ``benchbot github`` takes from its environment."""

    event_name: str
    event_path: Path
    repository: str
    token: str | None  # None in the measure mode, which publishes nothing
    api_url: str = DEFAULT_API_URL
    server_url: str = DEFAULT_SERVER_URL
    run_id: str | None = None
    run_attempt: str | None = None
    workspace: Path = Path(".")
    step_summary: Path | None = None
    output: Path | None = None
    results_dir: Path = Path("benchbot-results")
    # The action's inputs (BENCHBOT_*); None: take the config's value.
    config_path: str | None = None
    overrides: Overrides = field(default_factory=Overrides)  # the inputs runs and fail-on
    comment: bool | None = None
    check_name: str | None = None
    bot_login: str | None = None
    artifact: str = DEFAULT_ARTIFACT
    throttle: bool = True
    mode: Mode = "all"
    job: str | None = None  # the gate's hand-over (JSON), for measure and publish
    measure_result: str | None = None  # the measure job's result, for publish
    shards: int | None = None  # the gate: how many machines share the comparison
    shard: Shard | None = None  # measure: the share of it this job measures (K/N)
    history_branch: str = DEFAULT_HISTORY_BRANCH  # a push: where its history is kept

    @property
    def run_url(self) -> str | None:
        """The workflow run's page, linked from the comment and the check."""
        if not self.run_id:
            return None
        return f"{self.server_url}/{self.repository}/actions/runs/{self.run_id}"

    def with_inputs(self, config: Config) -> Config:
        """The config with the inputs check-name and comment put over it."""
        status = dataclasses.replace(config.status, name=self.check_name or config.status.name)
        comment = self.comment if self.comment is not None else config.github.comment
        github = dataclasses.replace(config.github, comment=comment)
        return dataclasses.replace(config, status=status, github=github)

    @classmethod
    def from_env(cls, env: Mapping[str, str], *, token: str | None = None) -> ActionEnv:
        """Read the environment; a missing or malformed variable is a UsageError naming it.

        ``token`` is the token when benchbot took it out of its environment already
        (``secret.hide_token``); else GITHUB_TOKEN is read. Every mode but ``measure``
        needs one.
        """

        def get(name: str) -> str | None:
            value = env.get(name, "").strip()
            return value or None

        def need(name: str) -> str:
            value = get(name)
            if value is None:
                raise UsageError(
                    f"{name} is not set: `benchbot github` runs inside a GitHub Actions job "
                    "(use `benchbot compare` elsewhere)"
                )
            return value

        workspace = Path(get("GITHUB_WORKSPACE") or ".")
        workdir = get("BENCHBOT_WORKING_DIRECTORY")
        temp = get("RUNNER_TEMP")
        mode = _choice(get("BENCHBOT_MODE") or "all", MODES, "BENCHBOT_MODE (input mode)")
        if token is None:
            token = get("GITHUB_TOKEN") if mode == "measure" else need("GITHUB_TOKEN")
        shards = _setting(get, "shards", "BENCHBOT_SHARDS", "input shards")
        if mode == "all" and shards not in (None, 1):
            raise UsageError(
                f"BENCHBOT_SHARDS (input shards): {shards} shards need the three-job workflow "
                "(mode: gate, a matrix of measure jobs, publish); mode all measures on one machine"
            )
        measure_result = get("BENCHBOT_MEASURE_RESULT")
        if measure_result is not None:
            measure_result = _choice(measure_result, MEASURE_RESULTS,
                                     "BENCHBOT_MEASURE_RESULT (input measure-result)")
        return cls(
            event_name=need("GITHUB_EVENT_NAME"),
            event_path=Path(need("GITHUB_EVENT_PATH")),
            repository=need("GITHUB_REPOSITORY"),
            token=token,
            api_url=(get("GITHUB_API_URL") or DEFAULT_API_URL).rstrip("/"),
            server_url=(get("GITHUB_SERVER_URL") or DEFAULT_SERVER_URL).rstrip("/"),
            run_id=get("GITHUB_RUN_ID"),
            run_attempt=get("GITHUB_RUN_ATTEMPT"),
            workspace=workspace / workdir if workdir else workspace,
            step_summary=_path(get("GITHUB_STEP_SUMMARY")),
            output=_path(get("GITHUB_OUTPUT")),
            results_dir=Path(
                get("BENCHBOT_RESULTS_DIR")
                or (Path(temp) / "benchbot-results" if temp else workspace / "benchbot-results")
            ),
            config_path=get("BENCHBOT_CONFIG"),
            overrides=_overrides(get),
            comment=_switch(get("BENCHBOT_COMMENT"), "BENCHBOT_COMMENT (input comment)"),
            check_name=get("BENCHBOT_CHECK_NAME"),
            bot_login=get("BENCHBOT_BOT_LOGIN"),
            artifact=get("BENCHBOT_ARTIFACT") or DEFAULT_ARTIFACT,
            throttle=_switch(get("BENCHBOT_GITHUB_THROTTLE"), "BENCHBOT_GITHUB_THROTTLE")
            is not False,
            mode=mode,
            job=get("BENCHBOT_JOB"),
            measure_result=measure_result,
            shards=shards,
            shard=_setting(get, "shard", "BENCHBOT_SHARD", "input shard"),
            history_branch=_branch(get("BENCHBOT_HISTORY_BRANCH") or DEFAULT_HISTORY_BRANCH),
        )


def check_branch(name: str) -> str:
    """A branch name benchbot writes to: letters, digits, ``.``, ``_``, ``-`` and ``/``
    between parts, none beginning with a dot or ending in ``.lock``; else ValueError."""
    if not re.fullmatch(r"[A-Za-z0-9_][A-Za-z0-9._-]*(/[A-Za-z0-9_][A-Za-z0-9._-]*)*", name) \
            or ".." in name or name.endswith(".lock") or len(name) > 100:
        raise ValueError(f"history branch {name[:60]!r}: not a branch name benchbot writes to")
    return name


def _branch(name: str) -> str:
    try:
        return check_branch(name)
    except ValueError as exc:
        raise UsageError(f"BENCHBOT_HISTORY_BRANCH (input history-branch): {exc}") from None


def _choice(value: str, choices: tuple[str, ...], name: str) -> Any:
    if value not in choices:
        raise UsageError(f"{name}: must be one of {', '.join(choices)}, got {value[:40]!r}")
    return value


def _path(value: str | None) -> Path | None:
    return Path(value) if value else None


def _overrides(get: Callable[[str], str | None]) -> Overrides:
    """The action's inputs that are settings: read as the command line reads them."""
    values: dict[str, object] = {}
    for name, variable, shown in (("runs", "BENCHBOT_RUNS", "input runs"),
                                  ("budget", "BENCHBOT_BUDGET", "input budget"),
                                  ("profile", "BENCHBOT_PROFILE", "input profile"),
                                  ("fail_on", "BENCHBOT_FAIL_ON", "input fail-on")):
        value = _setting(get, name, variable, shown)
        if value is not None:
            values[name] = value
    try:
        check_design(values.get("runs"), values.get("budget"), None,
                     spell=lambda key: f"BENCHBOT_{key.upper()} (input {key})")
    except SettingError as exc:
        raise UsageError(str(exc)) from None
    return Overrides(**values)  # type: ignore[arg-type]


def _setting(get: Callable[[str], str | None], name: str, variable: str, shown: str) -> Any:
    """A setting from an input, read as the command line reads it (None: not given)."""
    text = get(variable)
    if text is None:
        return None
    try:
        return read(name, text)
    except SettingError as exc:
        raise UsageError(f"{variable} ({shown}): {exc}") from None


def _switch(value: str | None, name: str) -> bool | None:
    """An on/off input, read as settings reads a switch; an input may also say 1 or 0."""
    if value is None:
        return None
    try:
        return switch({"1": "on", "0": "off"}.get(value, value))
    except SettingError as exc:
        raise UsageError(f"{name}: {exc}") from None
