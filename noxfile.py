"""nox sessions (``nox -l`` lists them; ``nox`` alone runs ``tests`` and ``lint``, minutes, not
the 30-minute conformance run):

- ``conformance``: the suite on the pinned frameworks; fails on mismatches;
- ``tests``: the suite's own tests;
- ``lint``: ruff check and format, mypy, and the dead-code check (vulture), at constraints.txt's
  pins;
- ``bench``: ``conformance bench`` (wall times, baseline, phases, peak RSS);
- ``versions(stack=...)``: NumPyro's items on an older framework stack (see STACKS);
- ``mutants``: ``conformance mutants``, every catalogued bug injected; fails if one survives.

Pins live in one place, constraints.txt (pyproject.toml's extras give lower bounds only).
Override one with an environment variable, e.g. ``CONFORMANCE_PIN_NUMPYRO=0.16.1
CONFORMANCE_PIN_JAX=0.4.35 CONFORMANCE_PIN_JAXLIB=0.4.35 nox -s conformance``: the session
installs with a copy of the constraints in which the overrides replace those pins.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import nox

nox.options.sessions = ["tests", "lint"]

#: Framework stacks for version-matrix runs: name → pins that replace the defaults.
STACKS: dict[str, dict[str, str]] = {
    "current": {},
    "numpyro-0.15.3": {"numpyro": "0.15.3", "jax": "0.4.34", "jaxlib": "0.4.34"},
    "numpyro-0.16.1": {"numpyro": "0.16.1", "jax": "0.4.35", "jaxlib": "0.4.35"},
}
nox.options.reuse_existing_virtualenvs = True
#: What the ``versions`` sessions run on each stack (see its docstring).
VERSION_SCOPE = (
    "--framework=numpyro",
    "--variants=off",
    *(
        f"--check={c}"
        for c in ("shapes", "log_prob", "grad", "grad_functional", "plate", "scan", "plate_in_scan")
    ),
)

ROOT = Path(__file__).parent


CONSTRAINTS = ROOT / "constraints.txt"


def _name(requirement: str) -> str:
    return re.split(r"[=<>!~ \[;]", requirement, maxsplit=1)[0].strip()


def constraints() -> list[str]:
    """constraints.txt's pins, comments and blank lines left out."""
    lines = (line.split("#", 1)[0].strip() for line in CONSTRAINTS.read_text().splitlines())
    return [line for line in lines if line]


def pinned(name: str) -> str:
    """constraints.txt's requirement for ``name`` (one place for each pin)."""
    for requirement in constraints():
        if _name(requirement) == name:
            return requirement
    raise KeyError(f"{name} is not pinned in {CONSTRAINTS.name}")


def pinned_frameworks(overrides: dict[str, str] | None = None) -> list[str]:
    """constraints.txt's pins; ``overrides`` and ``CONFORMANCE_PIN_<NAME>`` replace one."""
    pins = []
    for requirement in constraints():
        name = _name(requirement)
        override = (overrides or {}).get(name) or os.environ.get(
            f"CONFORMANCE_PIN_{name.upper().replace('-', '_')}"
        )
        pins.append(f"{name}=={override}" if override else requirement)
    return pins


def install_stack(
    session: nox.Session, extras: tuple[str, ...] = (), overrides: dict[str, str] | None = None
) -> None:
    """The suite with its frameworks (and ``extras``), under constraints.txt's pins with the
    overrides applied."""
    pins = Path(session.create_tmp()) / "constraints.txt"
    pins.write_text("\n".join(pinned_frameworks(overrides)) + "\n")
    session.install("-c", str(pins), "-e", f".[{','.join(('frameworks', *extras))}]")
    session.run("python", "-m", "pip", "freeze", silent=False)


@nox.session
def conformance(session: nox.Session) -> None:
    """Run the conformance suite on CPU and write reports/results.json; fails on mismatches
    (the report is written either way)."""
    install_stack(session)
    session.run("conformance", "run", "-n", "auto", *session.posargs)


@nox.session
def tests(session: nox.Session) -> None:
    """The suite's own tests."""
    install_stack(session, ("test",))
    session.run("pytest", "tests", "-n", "auto", *session.posargs)


@nox.session
def bench(session: nox.Session) -> None:
    """``conformance bench``: wall time (-n 0, -n 2), bare-loop baseline, phases, peak RSS."""
    install_stack(session)
    session.run("conformance", "bench", *session.posargs)


@nox.session
def lint(session: nox.Session) -> None:
    """ruff check and format --check; mypy (pyproject.toml's ``[tool.mypy]``) and the dead-code
    check (vulture, tests/project/dead_code.py), which read the package with its dependencies
    (not the frameworks: mypy reads them as Any). The tools at constraints.txt's versions."""
    session.install(pinned("ruff"))
    session.run("ruff", "check", ".")
    session.run("ruff", "format", "--check", ".")
    session.install("-c", str(CONSTRAINTS), "-e", ".", pinned("mypy"), pinned("vulture"))
    session.run("mypy")
    session.run("python", "tests/project/dead_code.py")


@nox.session
@nox.parametrize("stack", list(STACKS))
def versions(session: nox.Session, stack: str) -> None:
    """The suite on one framework stack, e.g. ``nox -s "versions(stack='numpyro-0.15.3')"``.

    Runs in non-strict known-failure mode: the registry's version-gated entries xfail the bugs
    those releases had, and a run shows them; results go to reports/<stack>/. The stacks differ
    only in NumPyro/JAX, so the run covers NumPyro's items: shapes, log_prob, both gradients and
    the effect handlers (plate, scan, plate_in_scan), without broadcast variants (VERSION_SCOPE;
    about 7,000 items, 18-25 min with one worker here). Append options to widen it, e.g.
    ``-- --variants=on --check=broadcast``.
    """
    install_stack(session, overrides=STACKS[stack])
    session.run(
        "conformance",
        "run",
        "-n",
        "auto",
        *VERSION_SCOPE,
        "--no-strict-known-failures",
        # Old XLA (jaxlib 0.4.3x) segfaults nondeterministically while compiling, a different
        # item on each run; one retry tells those apart from items that crash every time.
        "--crash-retries=1",
        f"--results=reports/{stack}/results.json",
        *session.posargs,
    )


@nox.session
def mutants(session: nox.Session) -> None:
    """``conformance mutants`` on the pinned stack: every catalogued bug replica injected at run
    time; prints the kill table, writes reports/mutants.json, fails if a mutant survives."""
    install_stack(session)
    session.run("conformance", "mutants", *session.posargs)
