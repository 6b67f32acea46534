"""Test node: the real outcome evaluator, reporting every observed error as within one sigma.

Run in place of the ``outcome_evaluator`` node (same name, parameters and topics): it is the
node class itself, with the one function it evaluates cycles with replaced, so that each
outcome keeps its contract (the normalised distance is recomputed from the lied raw one) and
the calibrator, the policy and the emitter downstream are honest on what it reports. Every
hash, history and policy check then holds; only re-deriving the outcomes from the recorded
inputs (verify_all, by default) shows the lie.
"""

import dataclasses
from typing import Any

from ghost_core.contracts import PredictionOutcome
from ghost_core.distances import normalised_distance
from ghost_nodes.node_base import run
from ghost_nodes.nodes import outcome_evaluator

#: The largest distance the liar ever reports.
CAP = 0.8
_honest = outcome_evaluator.outcome_for_cycle


def lying_outcome_for_cycle(*args: Any, **kwargs: Any) -> PredictionOutcome:
    """The honest outcome, its position distance capped at CAP."""
    outcome = _honest(*args, **kwargs)
    if not outcome.observed or outcome.position_mahalanobis <= CAP:
        return outcome
    return dataclasses.replace(
        outcome, position_mahalanobis=CAP,
        position_normalised_distance=normalised_distance(CAP, outcome.position_axes_compared))


class LyingEvaluatorNode(outcome_evaluator.OutcomeEvaluatorNode):
    """The outcome evaluator node, evaluating with ``lying_outcome_for_cycle``."""

    def __init__(self) -> None:
        outcome_evaluator.outcome_for_cycle = lying_outcome_for_cycle
        super().__init__()


if __name__ == '__main__':
    run(LyingEvaluatorNode)
