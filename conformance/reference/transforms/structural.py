"""Transforms made of other transforms or of array ops (compose, independent, inverse, cat,
stack, reshape, unpack): their log|det J| is the parts' summed over the right event dims, or 0.

The event-dim rules are the frameworks' own (the same in torch and NumPyro): a composition's
domain takes the event dims its later parts need, and each part's log|det J| is summed over
the event dims the composition has beyond the part's.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from ..declarations import OracleError
from .base import Inverse, ParamSpec, Space, Transform, as_array, batch_shape, sum_rightmost
from .registry import oracle_transform

oracle_transform(Inverse)


@oracle_transform
class Compose(Transform):
    """``parts`` applied in order; no parts is the identity on ``real`` (torch's
    ``identity_transform``)."""

    name = "compose"
    params = (ParamSpec("parts", static=True),)

    def __init__(self, parts: Sequence[Transform]) -> None:
        self.parts = tuple(parts)

    @property
    def bijective(self) -> bool:  # type: ignore[override]
        return all(p.bijective for p in self.parts)

    @property
    def domain(self) -> Space:
        if not self.parts:
            return Space("real", 0)
        event_dim = self.parts[-1].domain.event_dim
        for part in reversed(self.parts[:-1]):
            event_dim = part.domain.event_dim + max(event_dim - part.codomain.event_dim, 0)
        first = self.parts[0].domain
        return first.independent(event_dim - first.event_dim)

    @property
    def codomain(self) -> Space:
        if not self.parts:
            return Space("real", 0)
        event_dim = self.parts[0].codomain.event_dim
        for part in self.parts[1:]:
            event_dim = part.codomain.event_dim + max(event_dim - part.domain.event_dim, 0)
        last = self.parts[-1].codomain
        return last.independent(event_dim - last.event_dim)

    def forward(self, x: np.ndarray) -> np.ndarray:
        x = as_array(x)
        for part in self.parts:
            x = part.forward(x)
        return x

    def inverse(self, y: np.ndarray) -> np.ndarray:
        y = as_array(y)
        for part in reversed(self.parts):
            y = part.inverse(y)
        return y

    def log_abs_det_jacobian(self, x: np.ndarray, y: np.ndarray) -> np.ndarray:
        x = as_array(x)
        if not self.parts:
            return np.zeros(x.shape)
        total: np.ndarray = np.zeros(())
        event_dim = self.domain.event_dim
        for i, part in enumerate(self.parts):
            out = part.forward(x) if i < len(self.parts) - 1 else as_array(y)
            extra = event_dim - part.domain.event_dim
            total = total + sum_rightmost(part.log_abs_det_jacobian(x, out), extra)
            event_dim = part.codomain.event_dim + extra
            x = out
        return np.asarray(total)

    def forward_shape(self, shape: tuple[int, ...]) -> tuple[int, ...]:
        for part in self.parts:
            shape = part.forward_shape(shape)
        return tuple(shape)

    def inverse_shape(self, shape: tuple[int, ...]) -> tuple[int, ...]:
        for part in reversed(self.parts):
            shape = part.inverse_shape(shape)
        return tuple(shape)


@oracle_transform
class Independent(Transform):
    """``base`` with ``reinterpreted_batch_ndims`` more rightmost dims taken as one event:
    the same maps, log|det J| summed over those dims."""

    name = "independent"
    params = (
        ParamSpec("base", static=True),
        ParamSpec("reinterpreted_batch_ndims", static=True),
    )

    def __init__(self, base: Transform, reinterpreted_batch_ndims: int) -> None:
        self.base, self.ndims = base, int(reinterpreted_batch_ndims)

    @property
    def bijective(self) -> bool:  # type: ignore[override]
        return self.base.bijective

    @property
    def domain(self) -> Space:
        return self.base.domain.independent(self.ndims)

    @property
    def codomain(self) -> Space:
        return self.base.codomain.independent(self.ndims)

    def forward(self, x: np.ndarray) -> np.ndarray:
        return self.base.forward(x)

    def inverse(self, y: np.ndarray) -> np.ndarray:
        return self.base.inverse(y)

    def log_abs_det_jacobian(self, x: np.ndarray, y: np.ndarray) -> np.ndarray:
        return sum_rightmost(self.base.log_abs_det_jacobian(x, y), self.ndims)

    def forward_shape(self, shape: tuple[int, ...]) -> tuple[int, ...]:
        return self.base.forward_shape(shape)

    def inverse_shape(self, shape: tuple[int, ...]) -> tuple[int, ...]:
        return self.base.inverse_shape(shape)


def _event_dim(t: Transform) -> int:
    return max(t.domain.event_dim, t.codomain.event_dim)


def _axis(dim: int, ndim: int) -> int:
    if not -ndim <= dim < ndim:
        raise OracleError(f"dim {dim} out of range for {ndim} dimensions")
    return dim % ndim


@oracle_transform
class Cat(Transform):
    """``transforms`` on consecutive blocks of ``lengths`` entries along ``dim`` (torch's and
    NumPyro's ``CatTransform``). Its event dims are the parts' most; each part's log|det J|
    is summed up to them, then joined along ``dim`` where ``dim`` is a batch axis or added
    where it is an event axis."""

    name = "cat"
    params = (
        ParamSpec("transforms", static=True),
        ParamSpec("dim", static=True, default=0),
        ParamSpec("lengths", static=True, default=None),
    )

    def __init__(
        self, transforms: Sequence[Transform], dim: int = 0, lengths: Sequence[int] | None = None
    ) -> None:
        self.transforms = tuple(transforms)
        self.lengths = tuple(lengths) if lengths is not None else (1,) * len(self.transforms)
        if len(self.lengths) != len(self.transforms) or not self.transforms:
            raise OracleError("cat takes one length per transform, and at least one")
        self.dim = int(dim)

    @property
    def bijective(self) -> bool:  # type: ignore[override]
        return all(t.bijective for t in self.transforms)

    @property
    def event_dim(self) -> int:
        return max(_event_dim(t) for t in self.transforms)

    def _space(self, spaces: list[Space]) -> Space:
        return Space("cat", self.event_dim, parts=tuple(spaces), dim=self.dim, lengths=self.lengths)

    @property
    def domain(self) -> Space:
        return self._space([t.domain for t in self.transforms])

    @property
    def codomain(self) -> Space:
        return self._space([t.codomain for t in self.transforms])

    def _blocks(self, value: np.ndarray) -> list[np.ndarray]:
        axis = _axis(self.dim, value.ndim)
        if value.shape[axis] != sum(self.lengths):
            raise OracleError(
                f"axis {self.dim} has {value.shape[axis]} entries, not {sum(self.lengths)}"
            )
        edges = np.cumsum((0, *self.lengths))
        return [np.take(value, np.arange(a, b), axis=axis) for a, b in itertools.pairwise(edges)]

    def forward(self, x: np.ndarray) -> np.ndarray:
        x = as_array(x)
        parts = [t.forward(b) for t, b in zip(self.transforms, self._blocks(x), strict=True)]
        return np.concatenate(parts, axis=_axis(self.dim, x.ndim))

    def inverse(self, y: np.ndarray) -> np.ndarray:
        y = as_array(y)
        parts = [t.inverse(b) for t, b in zip(self.transforms, self._blocks(y), strict=True)]
        return np.concatenate(parts, axis=_axis(self.dim, y.ndim))

    def log_abs_det_jacobian(self, x: np.ndarray, y: np.ndarray) -> np.ndarray:
        x, y = as_array(x), as_array(y)
        pieces = [
            sum_rightmost(t.log_abs_det_jacobian(xb, yb), self.event_dim - _event_dim(t))
            for t, xb, yb in zip(self.transforms, self._blocks(x), self._blocks(y), strict=True)
        ]
        axis = _axis(self.dim, x.ndim)
        if axis < x.ndim - self.event_dim:
            return np.concatenate(pieces, axis=axis)
        return np.asarray(sum(pieces))

    def forward_shape(self, shape: tuple[int, ...]) -> tuple[int, ...]:
        return self._shape(shape, "forward_shape")

    def inverse_shape(self, shape: tuple[int, ...]) -> tuple[int, ...]:
        return self._shape(shape, "inverse_shape")

    def _shape(self, shape: tuple[int, ...], method: str) -> tuple[int, ...]:
        axis = _axis(self.dim, len(shape))
        outs = []
        for t, n in zip(self.transforms, self.lengths, strict=True):
            block = (*tuple(shape[:axis]), n, *tuple(shape[axis + 1 :]))
            outs.append(getattr(t, method)(block))
        total = sum(o[axis] for o in outs)
        return (*outs[0][:axis], total, *outs[0][axis + 1 :])


@oracle_transform
class Stack(Transform):
    """``transforms[i]`` on the i-th slice along ``dim`` (torch's ``StackTransform``). Its
    domain's event dims are the parts' most, plus one when ``dim`` falls inside them (torch's
    ``constraints.stack``); log|det J| is the parts' stacked along ``dim`` where it is a batch
    axis and added up where it is an event axis. (torch stacks them in both cases.)"""

    name = "stack"
    params = (ParamSpec("transforms", static=True), ParamSpec("dim", static=True, default=0))

    def __init__(self, transforms: Sequence[Transform], dim: int = 0) -> None:
        self.transforms, self.dim = tuple(transforms), int(dim)

    @property
    def bijective(self) -> bool:  # type: ignore[override]
        return all(t.bijective for t in self.transforms)

    def _space(self, spaces: list[Space]) -> Space:
        event_dim = max(s.event_dim for s in spaces)
        if self.dim + event_dim < 0:
            event_dim += 1
        return Space("stack", event_dim, parts=tuple(spaces), dim=self.dim)

    @property
    def domain(self) -> Space:
        return self._space([t.domain for t in self.transforms])

    @property
    def codomain(self) -> Space:
        return self._space([t.codomain for t in self.transforms])

    def _slices(self, value: np.ndarray) -> list[np.ndarray]:
        axis = _axis(self.dim, value.ndim)
        if value.shape[axis] != len(self.transforms):
            raise OracleError(
                f"axis {self.dim} has {value.shape[axis]} entries, not {len(self.transforms)}"
            )
        return [np.take(value, i, axis=axis) for i in range(len(self.transforms))]

    def forward(self, x: np.ndarray) -> np.ndarray:
        x = as_array(x)
        outs = [t.forward(s) for t, s in zip(self.transforms, self._slices(x), strict=True)]
        return np.stack(outs, axis=_axis(self.dim, x.ndim))

    def inverse(self, y: np.ndarray) -> np.ndarray:
        y = as_array(y)
        outs = [t.inverse(s) for t, s in zip(self.transforms, self._slices(y), strict=True)]
        return np.stack(outs, axis=_axis(self.dim, y.ndim))

    def log_abs_det_jacobian(self, x: np.ndarray, y: np.ndarray) -> np.ndarray:
        x, y = as_array(x), as_array(y)
        event_dim = self.domain.event_dim
        axis = _axis(self.dim, x.ndim)
        in_batch = axis < x.ndim - event_dim
        slice_event = event_dim if in_batch else event_dim - 1
        pieces = [
            sum_rightmost(t.log_abs_det_jacobian(xs, ys), slice_event - t.domain.event_dim)
            for t, xs, ys in zip(self.transforms, self._slices(x), self._slices(y), strict=True)
        ]
        return np.stack(pieces, axis=axis) if in_batch else np.asarray(sum(pieces))

    def forward_shape(self, shape: tuple[int, ...]) -> tuple[int, ...]:
        return tuple(shape)

    def inverse_shape(self, shape: tuple[int, ...]) -> tuple[int, ...]:
        return tuple(shape)


@oracle_transform
class Reshape(Transform):
    """The event of shape ``in_shape`` reshaped to ``out_shape``; log|det J| = 0. (torch's
    ``ReshapeTransform(in_shape, out_shape)``; NumPyro's takes them the other way round,
    ``ReshapeTransform(forward_shape=out_shape, inverse_shape=in_shape)``.)"""

    name = "reshape"
    params = (ParamSpec("in_shape", static=True), ParamSpec("out_shape", static=True))

    def __init__(self, in_shape: Sequence[int], out_shape: Sequence[int]) -> None:
        self.in_shape, self.out_shape = tuple(in_shape), tuple(out_shape)
        if math.prod(self.in_shape) != math.prod(self.out_shape):
            raise OracleError(f"{self.in_shape} and {self.out_shape} differ in size")

    @property
    def domain(self) -> Space:
        return Space("real", len(self.in_shape))

    @property
    def codomain(self) -> Space:
        return Space("real", len(self.out_shape))

    @staticmethod
    def _swap(
        shape: tuple[int, ...], old: tuple[int, ...], new: tuple[int, ...]
    ) -> tuple[int, ...]:
        cut = len(shape) - len(old)
        if cut < 0 or tuple(shape[cut:]) != old:
            raise ValueError(f"shape {shape} does not end in {old}")
        return tuple(shape[:cut]) + new

    def forward(self, x: np.ndarray) -> np.ndarray:
        x = as_array(x)
        return x.reshape(self.forward_shape(x.shape))

    def inverse(self, y: np.ndarray) -> np.ndarray:
        y = as_array(y)
        return y.reshape(self.inverse_shape(y.shape))

    def log_abs_det_jacobian(self, x: np.ndarray, y: np.ndarray) -> np.ndarray:
        return np.zeros(batch_shape(as_array(x).shape, len(self.in_shape)))

    def forward_shape(self, shape: tuple[int, ...]) -> tuple[int, ...]:
        return self._swap(tuple(shape), self.in_shape, self.out_shape)

    def inverse_shape(self, shape: tuple[int, ...]) -> tuple[int, ...]:
        return self._swap(tuple(shape), self.out_shape, self.in_shape)


@oracle_transform
class Unpack(Transform):
    """A ``real_vector`` cut into named arrays, consecutive blocks reshaped to ``layout``'s
    shapes (what NumPyro's ``UnpackTransform`` does with the usual ``unpack_fn``; its
    functions are Python code, the oracle takes the layout instead). log|det J| = 0; the
    codomain is ``dependent`` and, as in NumPyro, shapes are not offered."""

    name = "unpack"
    params = (ParamSpec("layout", static=True),)

    def __init__(self, layout: Mapping[str, Sequence[int]]) -> None:
        self.layout = {k: tuple(v) for k, v in layout.items()}

    @property
    def domain(self) -> Space:
        return Space("real", 1)

    @property
    def codomain(self) -> Space:
        return Space("dependent", 0)

    def forward(self, x: np.ndarray) -> dict[str, np.ndarray]:  # type: ignore[override]
        x = as_array(x)
        out, start = {}, 0
        for key, shape in self.layout.items():
            size = math.prod(shape)
            out[key] = x[..., start : start + size].reshape(x.shape[:-1] + shape)
            start += size
        if start != x.shape[-1]:
            raise OracleError(f"the layout takes {start} entries, the input has {x.shape[-1]}")
        return out

    def inverse(self, y: Any) -> np.ndarray:
        blocks = [
            as_array(y[key]).reshape((*np.shape(y[key])[: np.ndim(y[key]) - len(shape)], -1))
            for key, shape in self.layout.items()
        ]
        return np.concatenate(blocks, axis=-1)

    def log_abs_det_jacobian(self, x: np.ndarray, y: Any) -> np.ndarray:
        return np.zeros(batch_shape(as_array(x).shape, 1))

    def forward_shape(self, shape: tuple[int, ...]) -> tuple[int, ...]:
        raise OracleError("unpack has no single output shape (NumPyro raises too)")

    def inverse_shape(self, shape: tuple[int, ...]) -> tuple[int, ...]:
        raise OracleError("unpack has no single input shape (NumPyro raises too)")
