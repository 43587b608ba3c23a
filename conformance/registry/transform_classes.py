"""Which framework class each oracle transform stands for, as data
(``transform_classes.yaml``), so that a check builds a framework's transform from the oracle's
name and parameters without an if-chain, and knows where the conventions differ."""

from __future__ import annotations

from functools import cache
from pathlib import Path

import yaml
from pydantic import BaseModel, ConfigDict, Field

TRANSFORM_CLASSES_FILE = Path(__file__).parent / "transform_classes.yaml"


class TransformClass(BaseModel):
    """One framework's class for an oracle transform: its name in the framework's transforms
    module, which of its arguments takes each oracle parameter (where the names differ),
    whether its ``log_abs_det_jacobian`` raises NotImplementedError, and a note."""

    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)

    cls: str = Field(alias="class")
    args: dict[str, str] = {}
    no_log_abs_det_jacobian: bool = False
    note: str = ""

    def argument(self, oracle_param: str) -> str:
        """The class's argument for the oracle's parameter ``oracle_param``."""
        return self.args.get(oracle_param, oracle_param)


@cache
def transform_classes() -> dict[str, dict[str, TransformClass]]:
    """oracle transform name → framework → its class, in the file's order."""
    data = yaml.safe_load(TRANSFORM_CLASSES_FILE.read_text(encoding="utf-8"))
    return {
        name: {fw: TransformClass.model_validate(entry) for fw, entry in by_framework.items()}
        for name, by_framework in data["transforms"].items()
    }


def transform_class(name: str, framework: str) -> TransformClass | None:
    """``framework``'s class for oracle transform ``name``, or None where it has none."""
    return transform_classes().get(name, {}).get(framework)
