"""sample_shapes: draws have shape sample_shape + batch_shape + event_shape and the right dtype.

For sample_shape (), (2,) and (2, 3), in every way the framework offers draws
(``Draws.draw_modes``): ``sample``, and ``rsample`` where the distribution has one, and
where the framework has them the contexts a model draws in (NumPyro: ``vmap`` over keys, a
sample site inside plates, inside ``scan``: the seed bug's class, for draws). The
draws are also held to the support. Where the framework fixes the shapes before running
(``TracedDrawShapes.draw_shapes``: JAX traces them), they are read from there, and the draws of the
largest sample_shape are held to those shapes and to the support in each mode that runs
sampler code of its own (``Draws.support_draw_modes``).
"""

from __future__ import annotations

import numpy as np

from conformance.check_names import CheckName
from conformance.checks import draw_scripts
from conformance.checks.base import Check, CheckResult, Reproducer
from conformance.checks.draw_scripts import Requests
from conformance.checks.draws import (
    draw,
    draw_shapes,
    drawing,
    expected_shape,
    has_rsample,
    outside_support,
)
from conformance.checks.subject import FrameworkError, Subject
from conformance.kinds import Kind
from conformance.operations import DrawMode, DrawRaised, Operation
from conformance.reproducers.script import Script, indented, not_written

SAMPLE_SHAPES: tuple[tuple[int, ...], ...] = ((), (2,), (2, 3))
#: Where the shapes are traced, the sample_shape drawn for the support in each mode: one
#: sampler per mode as (2, 3) would be (a sampler's compilation does not depend on how many
#: it draws), with 64 draws per batch element to hold to the support instead of 6.
SUPPORT_SAMPLE_SHAPE: tuple[int, ...] = (16, 4)


def requests(subject: Subject) -> list[tuple[DrawMode, tuple[int, ...]]]:
    """Every (mode, sample_shape) the framework offers for this distribution."""
    modes = list(drawing(subject).draw_modes)
    if DrawMode.RSAMPLE in modes and not has_rsample(subject):
        modes.remove(DrawMode.RSAMPLE)
    return [
        (mode, shape)
        for mode in modes
        for shape in SAMPLE_SHAPES
        if shape or not mode.needs_leading
    ]


def dtype_problem(subject: Subject, dtype: np.dtype) -> str | None:
    """A continuous family draws in the item's dtype; a discrete one in it or an integer or
    boolean dtype (the framework's choice, recorded)."""
    want = np.dtype(subject.dtype)
    if dtype == want:
        return None
    if subject.law.facts.discrete and dtype.kind in "iub":
        return None
    return f"dtype {dtype}, expected {want}"


class SampleShapesCheck(Check):
    name = CheckName.SAMPLE_SHAPES
    operation = Operation.SAMPLE
    description = "sample/rsample shapes (sample_shape + batch + event) and dtypes"
    #: Shapes depend on the parameters' shapes alone: cases of one file with the same
    #: parameter shapes share the item, in the case's first dtype (float32 unless it says
    #: otherwise: the dtype users draw in by default).
    draws_only = True
    draws_by_shape = True
    single_dtype = "first"

    @staticmethod
    def _requests(subject: Subject) -> tuple[Requests, list | None, Requests]:
        """The requests wanted, their traced shapes (None where the framework traces none)
        and the requests drawn.

        Where the framework fixes the draws' shapes before running (JAX), they are read from
        there, and only the largest sample_shape of each mode the adapter draws for the
        support is drawn: each request is a sampler compiled of its own (Gamma's: 1.5 s).
        A request whose draws raised while tracing is reported as such, and not drawn."""
        wanted = requests(subject)
        traced = draw_shapes(subject, wanted)
        raised = {
            r: t for r, t in zip(wanted, traced or [], strict=False) if isinstance(t, DrawRaised)
        }
        support_modes = drawing(subject).support_draw_modes
        drawn = (
            wanted
            if traced is None
            else [
                (mode, SUPPORT_SAMPLE_SHAPE)
                for mode, shape in wanted
                if shape == SAMPLE_SHAPES[-1]
                and (mode, shape) not in raised
                and (support_modes is None or mode in support_modes)
            ]
        )
        return wanted, traced, drawn

    def evaluate(self, subject: Subject) -> CheckResult:
        seed = subject.draw_seed(self.name)
        wanted, traced, drawn = self._requests(subject)
        values = dict(zip(drawn, draw(subject, drawn, seed), strict=True)) if drawn else {}
        described = traced or [(tuple(x.shape), str(x.dtype)) for x in values.values()]
        problems = []
        shapes: dict[str, dict] = {}
        for (mode, shape), found in zip(wanted, described, strict=True):
            label = f"{mode}{tuple(shape)}"
            if isinstance(found, DrawRaised):
                shapes[label] = {"raised": str(found)}
                problems.append((Kind.RAISES, f"{label}: {found}"))
                continue
            found_shape, found_dtype = found
            want = expected_shape(subject, shape)
            shapes[label] = {"shape": list(found_shape), "dtype": found_dtype}
            x = values.get((mode, shape)) if traced is None else None
            if tuple(found_shape) != want:
                problems.append(
                    (Kind.SHAPE, f"{label}: shape {tuple(found_shape)}, expected {want}")
                )
            elif wrong := dtype_problem(subject, np.dtype(found_dtype)):
                problems.append((Kind.DTYPE, f"{label}: {wrong}"))
            elif x is not None and (where := outside_support(subject, x)):
                problems.append((Kind.SAMPLE_SUPPORT, f"{label}: {where}"))
        if traced is not None:
            problems += self._support_problems(
                subject, values, dict(zip(wanted, traced, strict=True))
            )
            shapes.update(
                {
                    f"{m}{s} (support)": {"shape": list(x.shape), "dtype": str(x.dtype)}
                    for (m, s), x in values.items()
                }
            )
        metrics = {
            "modes": {
                m: drawing(subject).draw_modes[m] for m in dict.fromkeys(m for m, _ in wanted)
            },
            "draws": shapes,
        }
        if problems:
            kind = problems[0][0]
            return self.fail(subject, kind, "\n  ".join(p for _, p in problems), metrics)
        return CheckResult(True, metrics=metrics)

    @staticmethod
    def _support_problems(subject: Subject, values: dict, traced: dict) -> list[tuple[Kind, str]]:
        """Where the shapes were traced: each mode's support draws have the shape and dtype
        the trace gives that mode, and lie in the support."""
        problems: list[tuple[Kind, str]] = []
        for (mode, shape), x in values.items():
            label = f"{mode}{tuple(shape)}"
            want = (expected_shape(subject, shape), traced[(mode, SAMPLE_SHAPES[-1])][1])
            if (tuple(x.shape), str(x.dtype)) != want:
                problems.append(
                    (Kind.SHAPE, f"{label}: drawn {x.shape} {x.dtype}, traced {want[0]} {want[1]}")
                )
            elif where := outside_support(subject, x):
                problems.append((Kind.SAMPLE_SUPPORT, f"{label}: {where}"))
        return problems

    def reproducer(self, subject: Subject) -> Reproducer | None:
        """The item's requests drawn by the framework from the item's seed (traced first where
        the adapter reads shapes from a trace), held to the shapes, dtypes and support."""
        seed = subject.draw_seed(self.name)
        try:
            with subject.adapter.precision(subject.dtype):
                wanted, traced, drawn = self._requests(subject)
        except FrameworkError:  # construction raised: the script's plain draws raise the same
            wanted = drawn = [(DrawMode.SAMPLE, shape) for shape in SAMPLE_SHAPES]
            traced = None
        if drawn and not draw_scripts.script_sees_support_failure(subject, drawn, seed):
            return None
        named = {"WANTED": wanted, "DRAWN": drawn}

        def body(script: Script) -> list[str]:
            lines = [
                *draw_scripts.definitions(script),
                *draw_scripts.DRAW_PROBLEMS,
                "problems = []",
            ]
            if traced is not None:
                shapes = script.dialect.traced_shapes(
                    {"call": script.call, "arrays": script.arrays, "requests": "WANTED"}
                )
                if shapes is None:
                    return not_written("traced shapes")
                lines += [
                    *shapes,
                    "for (mode, shape), found in zip(WANTED, traced, strict=True):",
                    "    label = f'{mode}{shape}'",
                    "    print(label, found)",
                    "    if isinstance(found, str):",
                    "        problems.append(f'{label}: {found}')",
                    "        continue",
                    "    problems += shape_problems(label, found[0], found[1], shape)",
                ]
            lines += [
                "if DRAWN:",
                *indented(draw_scripts.drawn(script, subject, "DRAWN", "drawn")),
                "    for (mode, shape), x in zip(DRAWN, drawn, strict=True):",
                "        print(f'{mode}{shape} drawn', x.shape, x.dtype)",
                "        problems += draw_problems(f'{mode}{shape} drawn', x, shape)",
                "report(bool(problems), '; '.join(problems))",
            ]
            return lines

        return Reproducer(
            subject,
            self.name,
            body,
            lambda script: draw_scripts.constants(subject, seed, named),
        )
