"""What a check writes into a reproducer script, and what it writes it with.

:mod:`conformance.reproducers.render` writes the script around a check's part, the same for
every check; each check writes its own part (:meth:`conformance.checks.base.Check.reproducer`)
with :class:`Script` (how the framework is spelt and the distribution built) and
:func:`array_literal` (its own expected numbers, bit for bit). So adding a check adds its
reproducer in the check's module.
"""

from __future__ import annotations

import ast
import base64
import inspect
import io
import textwrap
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from conformance.reproducers.dialects import Dialect

#: Where :attr:`Script.divergence` puts p's distribution.
P_SLOT = "__p__"

#: Arrays above this many elements are embedded as base64 .npy instead of literal lists.
LITERAL_LIMIT = 2048


def array_literal(array: np.ndarray) -> str:
    """A NumPy expression that recreates ``array`` exactly (dtype and every bit)."""
    array = np.asarray(array)
    if array.size <= LITERAL_LIMIT:
        if array.dtype.kind == "f":
            body = repr(array.astype(np.float64).tolist())
            body = body.replace("inf", "float('inf')").replace("nan", "float('nan')")
        else:
            body = repr(array.tolist())
        # The dtype by name: np.bool is missing on NumPy 1.24-1.26, 'bool' works everywhere.
        return f"np.array({body}, dtype={array.dtype.name!r})"
    buf = io.BytesIO()
    np.save(buf, array, allow_pickle=False)
    encoded = base64.b64encode(buf.getvalue()).decode("ascii")
    return f'np.load(io.BytesIO(base64.b64decode("{encoded}")))'


def plain_source(function: Callable[..., Any]) -> list[str]:
    """``function``'s source as a script defines it: its own code, one definition with the
    suite's, without the annotations that name the suite's types (a script imports none)."""
    tree = ast.parse(textwrap.dedent(inspect.getsource(function)))
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef):
            node.returns = None
            for arg in [*node.args.posonlyargs, *node.args.args, *node.args.kwonlyargs]:
                arg.annotation = None
    return ast.unparse(tree).splitlines()


def indented(lines: list[str]) -> list[str]:
    """``lines`` one block deeper (a blank line stays blank)."""
    return ["    " + ln if ln else "" for ln in lines]


def not_written(what: str) -> list[str]:
    """A script's lines where its dialect writes no ``what``: it compares nothing and says so
    (exit 2), neither OK nor a MISMATCH it did not see."""
    return [f"print({'NOT COMPARED: no ' + what + ' written for this framework'!r})", "sys.exit(2)"]


@dataclass(frozen=True)
class Script:
    """The script a check's part goes into. Defined before the part: ``value``, each array
    input by its name, ``EXPECTED``/``TOLERANCE``/``VALID``/``EXPECTED_SHAPES`` (log_prob's,
    from the oracle), ``err_over_tol`` and ``report(mismatch, what)``, which exits 1 with
    ``MISMATCH`` when ``mismatch`` holds."""

    dialect: Dialect
    dtype: str
    #: The constructor call, as the adapter makes it (array inputs by name).
    call: str
    #: The array inputs by name (static ones are literals in the call): a compiled function's
    #: arguments.
    arrays: list[str]
    #: A KL case's ``kl_divergence(P_SLOT, q(...))`` call, P_SLOT standing for p;
    #: q's array inputs are defined as ``q_<name>`` ("" and none for any other case).
    divergence: str = ""
    q_arrays: list[str] = field(default_factory=list)

    @property
    def compiled(self) -> bool:
        return self.dialect.compiled

    def compiled_log_prob(self) -> list[str]:
        """Construction and log_prob in one ``jax.jit`` function, as the compiled items
        evaluate."""
        args = ", ".join([*self.arrays, "value"])
        return [
            self.dialect.jit_decorator,
            f"def compiled_log_prob({args}):",
            f"    return {self.call}.log_prob(value)",
        ]

    def method(
        self, expr: str, name: str, takes_value: bool = False, argument: str = "value"
    ) -> list[str]:
        """Lines that leave ``actual``: ``expr`` of the distribution (``dist.mean``,
        ``dist.cdf(value)``) read as the items read it: inside one ``jax.jit`` function with
        the construction where they evaluate compiled, of ``dist`` otherwise. ``argument``
        names what ``expr`` takes, where it takes one (``value``; ``q`` for icdf)."""
        d = self.dialect
        if not self.compiled:
            return [f"dist = {self.call}", f"actual = {d.to_numpy(expr)}"]
        args = ", ".join([*self.arrays, *([argument] if takes_value else [])])
        return [
            d.jit_decorator,
            f"def compiled_{name}({args}):",
            f"    dist = {self.call}",
            f"    return {expr}",
            "",
            f"actual = {d.to_numpy(f'compiled_{name}({args})')}",
        ]

    def kl(self) -> list[str]:
        """Lines that leave ``actual``: KL(p‖q) of a KL case, read as the items read it: both
        constructions and the divergence in one ``jax.jit`` function where they evaluate
        compiled."""
        d = self.dialect
        if not self.compiled:
            divergence = self.divergence.replace(P_SLOT, "dist")
            return [f"dist = {self.call}", f"actual = {d.to_numpy(divergence)}"]
        args = ", ".join([*self.arrays, *self.q_arrays])
        return [
            d.jit_decorator,
            f"def compiled_kl({args}):",
            f"    return {self.divergence.replace(P_SLOT, self.call)}",
            "",
            f"actual = {d.to_numpy(f'compiled_kl({args})')}",
        ]

    def kl_gradient(self, wrt: list[str]) -> list[str] | None:
        """Lines that leave ``grads``: the gradient of Σ ``CT_KL`` · KL by the script's arrays
        ``wrt`` (p's by name, q's as ``q_<name>``); None where the dialect writes none."""
        context = {
            "call": self.call,
            "divergence": self.divergence,
            "slot": P_SLOT,
            "arrays": [*self.arrays, *self.q_arrays],
            "wrt": wrt,
        }
        return self.dialect.kl_gradient(context)

    def log_prob_expr(self) -> str:
        """log_prob of ``value`` (of ``dist`` when eager, which the lines before built)."""
        if not self.compiled:
            return "dist.log_prob(value)"
        return f"compiled_log_prob({', '.join([*self.arrays, 'value'])})"

    def gradient(self, method: str, wrt: tuple[str, ...]) -> list[str]:
        """The dialect's lines that leave ``grads``, one per name of ``wrt``, taken the way
        ``method`` (``grad`` or ``grad_functional``) takes them."""
        context: dict[str, Any] = {
            "dialect": self.dialect,
            "dtype": self.dtype,
            "call": self.call,
            "method": method,
            "arrays": self.arrays,
            "compiled": self.compiled,
            "wrt": wrt,
        }
        return self.dialect.gradient(context)
