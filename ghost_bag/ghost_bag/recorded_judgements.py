"""What a recorded run decided, cycle by cycle: the raw and adjusted levels and the decision.

Read from the bag's calibrated assessments (which carry the raw assessment) and decision
rationales, joined on the cycle stamp, for the judgement summary (``ghost_core.summary``) that
``ghost_run`` prints as ``ghost_replay`` does. A cycle missing either message is left out.
"""

from __future__ import annotations

import os

from ghost_core.levels import DecisionKind, SelfAssessmentLevel
from ghost_core.summary import CycleJudgement

from .typed_read import read_typed

__all__ = ['read_judgements']

_CALIBRATED = 'ghost_interfaces/msg/CalibratedSelfAssessment'
_RATIONALE = 'ghost_interfaces/msg/DecisionRationale'


def read_judgements(bag: str | os.PathLike[str]) -> tuple[CycleJudgement, ...]:
    """Every recorded cycle with a calibrated assessment and a decision, in stamp order."""
    levels: dict[int, tuple[SelfAssessmentLevel, SelfAssessmentLevel]] = {}
    decisions: dict[int, DecisionKind] = {}
    for message in read_typed(bag, frozenset({_CALIBRATED, _RATIONALE}), 'the decisions'):
        stamp = message.decoded.header.stamp
        stamp_ns = int(stamp.sec) * 1_000_000_000 + int(stamp.nanosec)
        if message.type_name == _CALIBRATED:
            levels[stamp_ns] = (
                SelfAssessmentLevel(message.decoded.raw_assessment.overall_level),
                SelfAssessmentLevel(message.decoded.adjusted_overall_level))
        else:
            decisions[stamp_ns] = DecisionKind(message.decoded.decision.kind)
    return tuple(CycleJudgement(stamp_ns, *levels[stamp_ns], decisions[stamp_ns])
                 for stamp_ns in sorted(levels.keys() & decisions.keys()))
