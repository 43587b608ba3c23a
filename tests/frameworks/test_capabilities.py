"""An adapter offers an operation by implementing its protocol and naming it in ``operations``:
the built-in adapters' tables agree with what they implement, and the checks ask the protocol."""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np
import pytest

from conformance.adapters import BUILTIN
from conformance.adapters.api import Adapter
from conformance.adapters.capabilities import CAPABILITIES, Differentiates, disagreements, offers
from conformance.adapters.gpytorch.adapter import GpytorchAdapter
from conformance.adapters.torch.adapter import TorchAdapter
from conformance.check_names import CheckName
from conformance.checks import CHECKS
from conformance.operations import Operation


class CoreOnly(Adapter):
    """The core alone, with a table that claims gradients it does not implement."""

    name = "core-only"
    package = "numpy"
    module = "numpy"
    operations: ClassVar = {Operation.GRAD: "claimed"}
    opt_in: ClassVar = frozenset({Operation.VMAP})

    def asarray(self, array: np.ndarray, device: str) -> Any:
        return array

    def to_numpy(self, array: Any) -> np.ndarray:
        return np.asarray(array)

    def batch_shape(self, dist: Any) -> tuple[int, ...]:
        return ()

    def event_shape(self, dist: Any) -> tuple[int, ...]:
        return ()


@pytest.mark.parametrize("cls", BUILTIN, ids=lambda c: c.name)
def test_each_builtin_adapter_implements_every_operation_it_names(cls: type[Adapter]) -> None:
    adapter = cls()
    assert not disagreements(adapter)
    assert {op for op in Operation if offers(adapter, op)} == set(adapter.operations)


def test_every_operation_has_its_protocol_or_the_core() -> None:
    assert set(CAPABILITIES) == set(Operation)


def test_a_table_that_claims_more_than_the_adapter_implements_is_found() -> None:
    adapter = CoreOnly()
    assert disagreements(adapter) == [
        "core-only names grad in operations but does not implement Differentiates",
        "core-only opts in to vmap, which its operations do not name",
    ]
    assert not offers(adapter, Operation.GRAD)
    assert CHECKS[CheckName.GRAD].unsupported_by(adapter) == "core-only offers no grad"


def test_an_implemented_protocol_offers_only_what_the_table_names() -> None:
    """GPyTorch differentiates with torch's log_prob_vjp but claims no torch.func."""
    torch, gpytorch = TorchAdapter(), GpytorchAdapter()
    assert isinstance(gpytorch, Differentiates)
    assert offers(torch, Operation.GRAD_FUNCTIONAL)
    assert offers(gpytorch, Operation.GRAD)
    assert not offers(gpytorch, Operation.GRAD_FUNCTIONAL)


def test_an_adapter_whose_table_claims_more_fails_to_load_with_what_it_claims() -> None:
    """Loading it is a usage error that names each claim, not a run that skips in silence."""
    from conformance.adapters import AdapterLoadError, all_adapters

    with pytest.raises(AdapterLoadError) as info:
        all_adapters(("tests.frameworks.test_capabilities:CoreOnly",))
    assert str(info.value) == (
        "adapter CoreOnly: core-only names grad in operations but does not implement "
        "Differentiates; core-only opts in to vmap, which its operations do not name"
    )
