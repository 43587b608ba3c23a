"""How the GPyTorch adapters build a covariance operator from the covariance tensor ``x``.

The adapter calls these functions; a reproducer embeds their source (``inspect.getsource``) and
calls them with the same arguments, so the construction is stated once. Imported only where a
GPyTorch operator is built (it imports torch and linear_operator).
"""

from __future__ import annotations

from typing import Any

import linear_operator.operators
import torch


def diagonal_operator(x: Any) -> Any:
    return linear_operator.operators.DiagLinearOperator(x.diagonal(dim1=-2, dim2=-1))


def block_diagonal_operator(x: Any, m: int) -> Any:
    k = x.shape[-1] // m  # m: the block size
    blocks = [x[..., j * m : (j + 1) * m, j * m : (j + 1) * m] for j in range(k)]
    return linear_operator.operators.BlockDiagLinearOperator(torch.stack(blocks, dim=-3))


def kronecker_operator(x: Any, b: int) -> Any:
    # b: the right factor's size; A = x[::b, ::b] / x[0, 0], B = x[:b, :b]
    left, right = x[..., ::b, ::b] / x[..., :1, :1], x[..., :b, :b]
    return linear_operator.operators.KroneckerProductLinearOperator(left, right)


def named_operator(x: Any, name: str) -> Any:
    return getattr(linear_operator.operators, name)(x)
