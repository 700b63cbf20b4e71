"""The client distribution's requirements (client/pyproject.toml) admit the versions the
server pins (constraints.txt): installing the client with its extras next to the server
never asks for another version (e.g. the ``[pandas]`` extra pandas 3 while the server
pins pandas 2.3.3)."""

from __future__ import annotations

import tomllib
from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

ROOT = Path(__file__).resolve().parents[2]


def _pins() -> dict[str, Version]:
    pins: dict[str, Version] = {}
    for line in (ROOT / "constraints.txt").read_text().splitlines():
        line = line.split("#")[0].strip()
        if "==" in line:
            name, version = line.split("==", 1)
            pins[canonicalize_name(name.split("[")[0])] = Version(version.split(";")[0].strip())
    return pins


def _client_requirements() -> list[tuple[str, Requirement]]:
    project = tomllib.loads((ROOT / "client" / "pyproject.toml").read_text())["project"]
    found = [("", Requirement(text)) for text in project["dependencies"]]
    for extra, texts in project["optional-dependencies"].items():
        found += [(extra, Requirement(text)) for text in texts]
    return found


def test_every_client_requirement_admits_the_servers_pin_and_is_bounded_above():
    pins = _pins()
    for extra, requirement in _client_requirements():
        name = canonicalize_name(requirement.name)
        assert name in pins, f"{requirement} ([{extra}]) has no pin in constraints.txt"
        assert requirement.specifier.contains(pins[name]), (
            f"{requirement} ([{extra}]) refuses the server's {name}=={pins[name]}"
        )
        assert any(s.operator in ("<", "<=", "~=", "==") for s in requirement.specifier), (
            f"{requirement} ([{extra}]) has no upper bound: a new major version would come in"
        )


def test_the_pandas_extra_keeps_pandas_2():
    pandas = next(r for extra, r in _client_requirements() if extra == "pandas")
    assert pandas.specifier.contains("2.3.3") and not pandas.specifier.contains("3.0.0")


def test_the_lowest_environment_is_each_requirements_lower_bound():
    """client/constraints-lowest.txt (tests/client/test_extras_versions.py's environment)
    holds exactly the lower bound of each requirement but the ``spark`` extra's."""
    lowest: dict[str, Version] = {}
    for line in (ROOT / "client" / "constraints-lowest.txt").read_text().splitlines():
        line = line.split("#")[0].strip()
        if "==" in line:
            name, version = line.split("==", 1)
            lowest[canonicalize_name(name)] = Version(version)
    for extra, requirement in _client_requirements():
        if extra == "spark":
            continue
        bounds = [s.version for s in requirement.specifier if s.operator == ">="]
        assert len(bounds) == 1, f"{requirement} ([{extra}]) needs one lower bound"
        name = canonicalize_name(requirement.name)
        assert lowest.get(name) == Version(bounds[0]), (
            f"client/constraints-lowest.txt has {name}=={lowest.get(name)}, "
            f"pyproject's lower bound is {bounds[0]}"
        )
