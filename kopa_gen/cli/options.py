"""What every command shares: the parser, the argument types, defaults read from config classes, the `Endpoint`
option group, the spread options and the parsing of flags into a command's one config object."""

from __future__ import annotations

import argparse
import dataclasses
import functools
import importlib
import json
import os
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn, TypeAlias, TypeVar

from kopa_gen.language.diagnostics import UserError

if TYPE_CHECKING:
    from kopa_gen.language.settings import AgentSettings, EndpointSettings
    from kopa_gen.project import Project
    from kopa_gen.runtime.spread import Spread

T = TypeVar("T")


class UsageError(UserError):
    """A command-line mistake found after parsing (a missing companion option, a malformed argument): printed as
    one line on stderr, exit status 2, like argparse's own."""


class _HelpFormatter(argparse.ArgumentDefaultsHelpFormatter):
    """Shows an option's default, except for the empty ones (None, False, [])."""

    def _get_help_string(self, action: argparse.Action) -> str | None:
        default = action.default.value if isinstance(action.default, ConfigDefault) else action.default
        if default is None or default is False or default == [] or default is argparse.SUPPRESS:
            return action.help
        return super()._get_help_string(action)


class Parser(argparse.ArgumentParser):
    """Every command-line mistake is one line on stderr (no usage block) and exit status 2."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("formatter_class", _HelpFormatter)
        super().__init__(*args, **kwargs)

    def add_argument(self, *args: Any, **kwargs: Any) -> argparse.Action:
        """As argparse's, except that lazy `Choices` are attached after argparse has checked the argument: its
        check formats the metavar, which would list (and so load) the choices for every command."""
        choices = kwargs.get("choices")
        if not isinstance(choices, Choices):
            return super().add_argument(*args, **kwargs)
        action = super().add_argument(*args, **{**kwargs, "choices": None})
        action.choices = choices
        return action

    def error(self, message: str) -> NoReturn:
        message = message.replace("\r", "\\r").replace(
            "\n", "\\n"
        )  # a value's own line break stays in the line
        self.exit(2, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


Subparsers: TypeAlias = "argparse._SubParsersAction[Parser]"
"""What each command module adds its commands to."""


class Choices(Sequence[str]):
    """argparse `choices` read from a registry only when a value is checked or help is printed: importing every
    policy (about a second) or the training presets is a cost other commands should not pay (`Parser.add_argument`
    attaches them after argparse's own check, which would list them)."""

    def __init__(self, load: Callable[[], Iterable[str]]) -> None:
        self._load = load

    @functools.cached_property
    def _names(self) -> list[str]:
        return list(self._load())

    def __getitem__(self, index: Any) -> Any:
        return self._names[index]

    def __len__(self) -> int:
        return len(self._names)

    def __iter__(self) -> Iterator[str]:
        return iter(self._names)

    def __contains__(self, value: object) -> bool:
        return value in self._names


def field_default(cls: type[Any], name: str) -> Any:
    """The default of field `name` of a dataclass or pydantic model (a factory's value for a factory field)."""
    if dataclasses.is_dataclass(cls):
        field = {f.name: f for f in dataclasses.fields(cls)}[name]
        if field.default is not dataclasses.MISSING:
            return field.default
        if field.default_factory is not dataclasses.MISSING:
            return field.default_factory()
        raise TypeError(f"{cls.__name__}.{name} has no default")
    return cls.model_fields[name].get_default(call_default_factory=True)


class ConfigDefault:
    """A flag's default that lives in a config class (`"kopa_gen.edge.graph:GraphConfig.seed"`), read only when
    help is printed or the flag's command runs: building the parser imports no config module (about a second for
    the evaluator's), and the number is written once, in the config."""

    def __init__(self, where: str, convert: Callable[[Any], Any] | None = None) -> None:
        self.where = where
        self.convert = convert

    @functools.cached_property
    def value(self) -> Any:
        module, _, attr = self.where.partition(":")
        cls_name, _, name = attr.partition(".")
        value = field_default(getattr(importlib.import_module(module), cls_name), name)
        return self.convert(value) if self.convert else value

    def __str__(self) -> str:
        return str(self.value)

    def __repr__(self) -> str:
        return f"ConfigDefault({self.where!r})"


def default_of(cls: type[Any], name: str) -> Any:
    """A flag's default read from a command's own options class."""
    return field_default(cls, name)


def positive_int(text: str) -> int:
    """argparse type: a whole number of at least 1."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def fraction(text: str) -> float:
    """argparse type: a share from 0 to 1 (NaN and infinity are not shares)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not 0.0 <= value <= 1.0:  # also false for NaN
        raise argparse.ArgumentTypeError(f"a share is from 0 to 1 (0.1 = one in ten), got {text}")
    return value


def port(text: str) -> int:
    """argparse type: a TCP port, 1-65535."""
    value = positive_int(text)
    if value > 65535:
        raise argparse.ArgumentTypeError(f"a port is 1-65535, got {value}")
    return value


def json_object(text: str, example: str = '{"corp_code": "00126380"}') -> dict[str, Any]:
    """argparse type: one JSON object (tool arguments unless `example` shows another kind)."""
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        raise argparse.ArgumentTypeError(
            f"not valid JSON ({exc.msg} at column {exc.colno}); quote keys and text values, e.g. '{example}'"
        ) from None
    except (ValueError, RecursionError) as exc:  # an integer past 4,300 digits; nesting past the stack
        raise argparse.ArgumentTypeError(f"JSON this command cannot read ({_short(exc)})") from None
    if not isinstance(value, dict):
        raise argparse.ArgumentTypeError(f"must be a JSON object {{...}}, not {type(value).__name__}")
    return value


def json_value(text: str) -> Any:
    """argparse type: any JSON value (a submission to grade may be malformed on purpose)."""
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise argparse.ArgumentTypeError(
            f'not valid JSON ({exc.msg} at column {exc.colno}); e.g. \'{{"answer": 154329557, "unit": "천원"}}\''
        ) from None
    except (ValueError, RecursionError) as exc:  # an integer past 4,300 digits; nesting past the stack
        raise argparse.ArgumentTypeError(f"JSON this command cannot read ({_short(exc)})") from None


def _short(exc: BaseException) -> str:
    if isinstance(exc, RecursionError):
        return "nested too deep"
    return str(exc).split(";")[0]


_SETTINGS = "kopa_gen.language.settings"

# Endpoint settings field -> (flag suffix, argparse keywords); `generation.` fields are GenerationSettings'.
_ENDPOINT_FLAGS: dict[str, tuple[str, dict[str, Any]]] = {
    "api_key_env": ("api-key-env", {"metavar": "VAR"}),
    "timeout_s": ("timeout", {"type": float, "metavar": "S", "help": "seconds one request may take"}),
    "retries": (
        "retries",
        {"type": int, "metavar": "N", "help": "retries of a request that timed out or got 429/5xx"},
    ),
    "backoff_s": (
        "backoff",
        {"type": float, "metavar": "S", "help": "seconds before the first retry (doubled after)"},
    ),
    "generation.temperature": (
        "temperature",
        {"type": float, "metavar": "T", "help": "sampling temperature"},
    ),
    "generation.top_p": (
        "top-p",
        {"type": float, "metavar": "P", "help": "nucleus sampling (default: the server's)"},
    ),
    "generation.max_tokens": (
        "max-tokens",
        {"type": int, "metavar": "N", "help": "most tokens per reply (default: the server's)"},
    ),
    "generation.seed": (
        "sampling-seed",
        {
            "type": int,
            "metavar": "SEED",
            "help": "base of the request seed (eval sends it + 1000 x sandbox seed + rollout); -1 sends none",
        },
    ),
    "generation.stop": (
        "stop",
        {
            "action": "append",
            "default": None,
            "metavar": "TEXT",
            "help": "a stop sequence (repeat for several)",
        },
    ),
    "generation.extra_body": (
        "extra-body",
        {
            "type": lambda text: json_object(text, '{"chat_template_kwargs": {"enable_thinking": false}}'),
            "metavar": "JSON",
            "help": 'merged into every request, e.g. \'{"chat_template_kwargs": {"enable_thinking": false}}\'',
        },
    ),
}


def _dest(prefix: str, suffix: str) -> str:
    return f"{prefix}_{suffix}".replace("-", "_") if prefix else suffix.replace("-", "_")


def _class_of(field: str) -> str:
    return "GenerationSettings" if field.startswith("generation.") else "EndpointSettings"


class Endpoint:
    """An OpenAI-compatible model endpoint, named on the command line by one option group: `--{prefix}base-url`,
    `--{prefix}model`, `--{prefix}api-key-env`, the request's time-out and retries, and the generation settings
    (`--{prefix}temperature`, `top-p`, `max-tokens`, `sampling-seed`, `stop`, `extra-body`), parsed into one
    `EndpointSettings` (kopa_gen/language/settings.py, where the defaults live)."""

    @staticmethod
    def add(
        parser: argparse.ArgumentParser,
        prefix: str,
        url_help: str,
        model_help: str | None = None,
        key_help: str = "environment variable of its key",
        required: bool = False,
    ) -> None:
        """The option group of one endpoint; `prefix` ("judge", "writer", ... or "") starts every flag."""
        flag = f"--{prefix}-" if prefix else "--"
        group = parser.add_argument_group(
            f"{prefix or 'model'} endpoint", f"an OpenAI-compatible endpoint ({flag}base-url and {flag}model)"
        )
        group.add_argument(f"{flag}base-url", required=required, help=url_help)
        group.add_argument(
            f"{flag}model", required=required, help=model_help or f"model name at {flag}base-url"
        )
        for field, (suffix, kwargs) in _ENDPOINT_FLAGS.items():
            kwargs = dict(kwargs)
            if field == "api_key_env":
                kwargs["help"] = key_help
            name = field.rpartition(".")[2]
            kwargs.setdefault("default", ConfigDefault(f"{_SETTINGS}:{_class_of(field)}.{name}"))
            group.add_argument(f"{flag}{suffix}", dest=_dest(prefix, suffix), **kwargs)

    @staticmethod
    def parse(args: argparse.Namespace, prefix: str) -> EndpointSettings | None:
        """The endpoint the flags name, or None without a base URL; a base URL without a model is the user's
        mistake (it would send `"model": null`), and so is a setting out of range (named by its flag)."""
        from pydantic import ValidationError

        from kopa_gen.language.settings import EndpointSettings

        dest, flag = (f"{prefix.replace('-', '_')}_", f"--{prefix}-") if prefix else ("", "--")
        url, model = getattr(args, f"{dest}base_url"), getattr(args, f"{dest}model")
        if not url:
            return None
        if not model:
            raise UsageError(f"{flag}base-url needs {flag}model")
        top: dict[str, Any] = {"base_url": url, "model": model}
        generation: dict[str, Any] = {}
        for field, (suffix, _) in _ENDPOINT_FLAGS.items():
            value = getattr(args, _dest(prefix, suffix), None)
            if value is None or isinstance(value, ConfigDefault):
                continue  # not given: the settings class's default
            if field == "generation.seed" and value < 0:
                value = None
            if field.startswith("generation."):
                generation[field.removeprefix("generation.")] = value
            else:
                top[field] = value
        try:
            return EndpointSettings.model_validate({**top, "generation": generation})
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(p) for p in first["loc"])
            suffix = _ENDPOINT_FLAGS[where][0] if where in _ENDPOINT_FLAGS else where.replace("_", "-")
            message = str(first["msg"]).removeprefix("Value error, ")
            raise UsageError(f"argument {flag}{suffix}: {message}") from None


_AGENT_FLAGS: dict[str, tuple[str, dict[str, Any]]] = {
    "episode_timeout_s": (
        "episode-timeout",
        {"type": float, "metavar": "S", "help": "seconds per episode"},
    ),
    "max_turns": ("max-turns", {"type": int, "metavar": "N", "help": "model turns per episode"}),
    "parallel_tool_calls": (
        "parallel-tool-calls",
        {"action": argparse.BooleanOptionalAction, "help": "ask the model for parallel tool calls"},
    ),
    "budget_grace": (
        "budget-grace",
        {
            "action": argparse.BooleanOptionalAction,
            "help": "submit mode: one more turn to submit after the call budget is used up",
        },
    ),
    "tool_mode": (
        "tool-mode",
        {
            "choices": ("native", "prompt"),
            "help": "native: the request's tools and the reply's tool_calls (a server with a tool parser); "
            "prompt: tools described in the system prompt, calls read from the reply's text",
        },
    ),
}


class Agent:
    """`kopa-gen eval`'s agent-loop options, parsed into one `AgentSettings`."""

    @staticmethod
    def add(parser: argparse.ArgumentParser) -> None:
        group = parser.add_argument_group("agent loop", "how a model plays an episode")
        for field, (suffix, kwargs) in _AGENT_FLAGS.items():
            kwargs = dict(kwargs, default=ConfigDefault(f"{_SETTINGS}:AgentSettings.{field}"))
            group.add_argument(f"--{suffix}", dest=f"agent_{field}", **kwargs)

    @staticmethod
    def parse(args: argparse.Namespace) -> AgentSettings:
        from pydantic import ValidationError

        from kopa_gen.language.settings import AgentSettings

        given: dict[str, Any] = {}
        for field in _AGENT_FLAGS:
            value = getattr(args, f"agent_{field}", None)
            if value is not None and not isinstance(value, ConfigDefault):
                given[field] = value
        try:
            return AgentSettings.model_validate(given)
        except ValidationError as exc:
            first = exc.errors()[0]
            suffix = _AGENT_FLAGS[str(first["loc"][0])][0]
            raise UsageError(f"argument --{suffix}: {first['msg']}") from None


def parse(cls: type[T], args: argparse.Namespace) -> T:
    """The command's options from the parsed flags: one field per flag (its dest), `Endpoint` groups by a field's
    `metadata={"endpoint": prefix}`, the agent group by `metadata={"agent": True}`, defaults from config classes
    resolved; validation is the class's `__post_init__`."""
    values: dict[str, Any] = {}
    for field in dataclasses.fields(cls):  # type: ignore[arg-type]
        if "endpoint" in field.metadata:
            values[field.name] = Endpoint.parse(args, field.metadata["endpoint"])
        elif "agent" in field.metadata:
            values[field.name] = Agent.parse(args)
        elif hasattr(args, field.name):
            value = getattr(args, field.name)
            values[field.name] = value.value if isinstance(value, ConfigDefault) else value
    return cls(**values)


def spread_arguments(parser: argparse.ArgumentParser, what: str) -> None:
    where = parser.add_mutually_exclusive_group()
    where.add_argument(
        "--workers",
        type=positive_int,
        default=ConfigDefault("kopa_gen.runtime.spread:Spread.workers"),
        help=f"worker processes on this machine running the {what}",
    )
    where.add_argument(
        "--ray",
        nargs="?",
        const="",
        metavar="ADDRESS",
        help=f"run the {what} on a Ray cluster (ADDRESS, e.g. 10.0.0.1:6379; without it $RAY_ADDRESS or a new "
        "local cluster); every node needs this checkout at the same path",
    )


def spread(workers: int, ray: str | None) -> Spread:
    from kopa_gen.runtime.spread import Spread, unreachable

    address = ray or os.environ.get("RAY_ADDRESS", "") if ray is not None else ""
    problem = unreachable(address) if address not in ("", "auto", "local") else None
    if problem is not None:
        raise UsageError(f"argument --ray: {problem}")
    return Spread(workers=workers, ray=ray)


def load(root: str | None) -> Project:
    """The project at --root, or the one found from the working directory."""
    from kopa_gen.project import load_project

    return load_project(Path(root) if root else None)


def root_folder(root: str | None) -> Path:
    from kopa_gen.roots import find_root

    return Path(root) if root else find_root()
