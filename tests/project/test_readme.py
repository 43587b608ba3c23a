"""The README's two quick-start lines are the commands CI and users run."""

from __future__ import annotations

import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def quick_start_commands() -> list[str]:
    text = (REPO / "README.md").read_text()
    section = text.split("## Quick start", 1)[1].split("\n## ", 1)[0]
    return [c.strip() for c in re.findall(r"```bash\n(.+?)\n\s*```", section)]


def test_quick_start_has_exactly_two_one_line_commands() -> None:
    commands = quick_start_commands()
    assert len(commands) == 2
    assert all("\n" not in c for c in commands)
    assert "conformance run" in commands[0]
    assert "pytest tests" in commands[1]


def test_ci_runs_readme_line_two() -> None:
    ci = (REPO / ".ci" / "run").read_text()
    assert quick_start_commands()[1] in ci


def test_the_pins_are_in_the_constraints_and_the_extras_give_lower_bounds() -> None:
    """A project installs the suite beside its own versions: no extra pins one exactly; the
    suite's own runs (README lines 1 and 2, CI, nox) pin with constraints.txt."""
    import tomllib

    pins = (REPO / "constraints.txt").read_text()
    assert "\ntorch==2.13.0\n" in pins  # the local +cpu build satisfies it
    extras = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    for name, requirements in extras["optional-dependencies"].items():
        assert not [r for r in requirements if "==" in r], name
    for command in quick_start_commands():
        assert 'pip install -c constraints.txt -e ".[frameworks' in command
    assert "-c constraints.txt" in (REPO / ".ci" / "run").read_text()
    assert 'install("-c", str(pins)' in (REPO / "noxfile.py").read_text()


def test_every_failure_kind_is_in_the_readme_table() -> None:
    """The README's kind table is the code's list, row for row (an entry's ``kind`` must be
    one of them, so a user reads the valid names there)."""
    from conformance.kinds import KINDS

    text = (REPO / "README.md").read_text()
    table = text.split("| kind | meaning |\n|---|---|\n", 1)[1].split("\n\n", 1)[0]
    rows = dict(re.findall(r"^\| `([a-z_]+)` \| (.+) \|$", table, flags=re.MULTILINE))
    assert rows == KINDS


def test_every_option_and_variable_is_in_the_configuration_table() -> None:
    """Options are declared once (``settings.add_options``); each has a README row, and every
    ``CONFORMANCE_*`` variable the code reads is named in the README (the list once left out
    CONFORMANCE_KNOWN_FAILURES and CONFORMANCE_ADAPTERS)."""
    from conformance.run.config.settings import add_options

    text = (REPO / "README.md").read_text()
    table = text.split("| option | variable | what it does |\n|---|---|---|\n", 1)[1]
    table = table.split("\n\n", 1)[0]
    documented = set(re.findall(r"^\| `(--[a-z\[\]-]+)", table, flags=re.MULTILINE))
    declared: list[str] = []
    add_options(lambda *names, **_: declared.extend(names))
    declared = [n.replace("--strict", "--[no-]strict") for n in declared]
    assert documented == set(declared)
    sources = [*(REPO / "conformance").rglob("*.py"), REPO / "noxfile.py"]
    read = {v for p in sources for v in re.findall(r"CONFORMANCE_[A-Z_]+", p.read_text())}
    # CONFORMANCE_PIN_NUMPYRO and its siblings: the README's CONFORMANCE_PIN_<PACKAGE>.
    read = {"CONFORMANCE_PIN_<PACKAGE>" if v.startswith("CONFORMANCE_PIN_") else v for v in read}
    missing = sorted(v for v in read if v not in text)
    assert read and not missing
