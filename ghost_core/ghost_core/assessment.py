"""Reference self-assessor: levels from the belief covariance against configured thresholds."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
import math

from ghost_core import _checks as check
from ghost_core.contracts import AxisAssessment, BeliefSelfAssessment
from ghost_core.errors import ConfigError, ContractError
from ghost_core.hashing import content_address
from ghost_core.levels import SelfAssessmentLevel, worst_level
from ghost_core.linalg import block3, covariance_defect
from ghost_core.samples import BeliefSample

__all__ = [
    'ASSESSOR_ID',
    'REASON_BEYOND_UNCERTAIN',
    'REASON_INVALID_ORIENTATION',
    'REASON_NON_FINITE_POSITION',
    'REASON_NON_FINITE_VELOCITY',
    'REASON_WITHIN_KNOWN',
    'REASON_WITHIN_UNCERTAIN',
    'BlockThresholds',
    'ThresholdsConfig',
    'assess_belief',
    'assess_belief_sample',
    'assess_block',
]

#: assessor_id of the reference self-assessor.
ASSESSOR_ID = 'covariance_threshold_v1'

REASON_WITHIN_KNOWN = 'within_known_threshold'
REASON_WITHIN_UNCERTAIN = 'within_uncertain_threshold'
REASON_BEYOND_UNCERTAIN = 'beyond_uncertain_threshold'


@dataclass(frozen=True, slots=True)
class BlockThresholds:
    """Thresholds of one block on its largest 1-sigma standard deviation.

    max_std <= known_max_std gives KNOWN; <= uncertain_max_std gives UNCERTAIN; above, UNKNOWN.
    Invariants: both finite, 0 < known_max_std <= uncertain_max_std.
    """

    known_max_std: float
    uncertain_max_std: float

    def __post_init__(self) -> None:
        """Enforce the invariants above, normalising field types."""
        for name in ('known_max_std', 'uncertain_max_std'):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not (
                math.isfinite(value) and value > 0.0
            ):
                raise ConfigError(f'BlockThresholds.{name} must be a finite number > 0, '
                                  f'got {value!r}')
            object.__setattr__(self, name, float(value))
        if self.uncertain_max_std < self.known_max_std:
            raise ConfigError(
                f'BlockThresholds.uncertain_max_std must be >= known_max_std '
                f'({self.known_max_std!r}), got {self.uncertain_max_std!r}')

    def level_of(self, max_std: float) -> tuple[SelfAssessmentLevel, str]:
        """Return the level of a block whose largest standard deviation is `max_std`."""
        if max_std <= self.known_max_std:
            return SelfAssessmentLevel.KNOWN, REASON_WITHIN_KNOWN
        if max_std <= self.uncertain_max_std:
            return SelfAssessmentLevel.UNCERTAIN, REASON_WITHIN_UNCERTAIN
        return SelfAssessmentLevel.UNKNOWN, REASON_BEYOND_UNCERTAIN

    def to_dict(self) -> dict[str, float]:
        """Return the thresholds as the dict that is content-addressed."""
        return {'known_max_std': self.known_max_std, 'uncertain_max_std': self.uncertain_max_std}


@dataclass(frozen=True, slots=True)
class ThresholdsConfig:
    """Per-block thresholds of the reference self-assessor (m, m/s, rad).

    Content-addressed: `sha256` = content_address(to_dict()), published as thresholds_sha256.
    """

    position: BlockThresholds = field(default_factory=lambda: BlockThresholds(0.5, 2.0))
    velocity: BlockThresholds = field(default_factory=lambda: BlockThresholds(0.5, 2.0))
    orientation: BlockThresholds = field(default_factory=lambda: BlockThresholds(0.1, 0.35))

    def __post_init__(self) -> None:
        """Enforce the invariants above, normalising field types."""
        for name in ('position', 'velocity', 'orientation'):
            value = getattr(self, name)
            if not isinstance(value, BlockThresholds):
                raise ConfigError(f'ThresholdsConfig.{name} must be a BlockThresholds, '
                                  f'got {value!r}')

    def to_dict(self) -> dict[str, dict[str, float]]:
        """Return the configuration as the dict whose content address is thresholds_sha256."""
        return {
            'orientation': self.orientation.to_dict(),
            'position': self.position.to_dict(),
            'velocity': self.velocity.to_dict(),
        }

    @property
    def sha256(self) -> str:
        """The content address of this configuration."""
        return content_address(self.to_dict())


def assess_block(covariance: Sequence[float], thresholds: BlockThresholds) -> AxisAssessment:
    """Return the assessment of one 3x3 covariance block (row-major).

    A block with NaN/inf, a negative variance, asymmetry or that is not positive
    semi-definite is UNKNOWN with the defect as reason and max_std 0.0 -- never KNOWN.
    """
    defect = covariance_defect(covariance)
    if defect is not None:
        return AxisAssessment(SelfAssessmentLevel.UNKNOWN, 0.0, defect)
    max_std = math.sqrt(max(covariance[0], covariance[4], covariance[8]))
    level, reason = thresholds.level_of(max_std)
    return AxisAssessment(level, max_std, reason)


def _covariance36(name: str, value: Sequence[float]) -> tuple[float, ...]:
    if isinstance(value, (str, bytes)) or len(value) != 36:
        raise ContractError(f'assess_belief.{name} must be 36 numbers (6x6 row-major), '
                            f'got {value!r}')
    try:
        return tuple(float(x) for x in value)
    except (TypeError, ValueError) as err:
        raise ContractError(f'assess_belief.{name} must be 36 numbers (6x6 row-major), '
                            f'got {value!r}') from err


def assess_belief(
    stamp_ns: int,
    frame_id: str,
    pose_covariance: Sequence[float],
    twist_covariance: Sequence[float],
    thresholds: ThresholdsConfig | None = None,
) -> BeliefSelfAssessment:
    """Return the raw self-assessment of a belief from its covariances (pure).

    Blocks (geometry_msgs row-major 6x6 order x, y, z, rot x, rot y, rot z): position = the
    x, y, z block of the pose covariance; orientation = its rotation block; velocity = the
    linear block of the twist covariance. The overall level is the worst block.
    """
    config = ThresholdsConfig() if thresholds is None else thresholds
    pose = _covariance36('pose_covariance', pose_covariance)
    twist = _covariance36('twist_covariance', twist_covariance)
    position = assess_block(block3(pose, 0, 0), config.position)
    orientation = assess_block(block3(pose, 3, 3), config.orientation)
    velocity = assess_block(block3(twist, 0, 0), config.velocity)
    return BeliefSelfAssessment(
        stamp_ns=stamp_ns,
        frame_id=frame_id,
        overall_level=worst_level(position.level, velocity.level, orientation.level),
        position=position,
        velocity=velocity,
        orientation=orientation,
        thresholds_sha256=config.sha256,
        assessor_id=ASSESSOR_ID,
        schema_version=check.SCHEMA_VERSION,
    )


#: Reasons given to a block whose state values (not its covariance) are unusable.
REASON_NON_FINITE_POSITION = 'non_finite_position'
REASON_NON_FINITE_VELOCITY = 'non_finite_velocity'
REASON_INVALID_ORIENTATION = 'invalid_orientation'


def assess_belief_sample(
    belief: BeliefSample, thresholds: ThresholdsConfig | None = None
) -> BeliefSelfAssessment:
    """Return the raw self-assessment of a whole belief: its covariances and its values.

    As `assess_belief`, and further: a position or velocity with NaN/inf makes that block
    UNKNOWN (reason non_finite_position / non_finite_velocity); an orientation quaternion that
    is not finite or has (near) zero norm makes the orientation block UNKNOWN (reason
    invalid_orientation). A belief whose values are garbage is never KNOWN, whatever
    covariance it declares.
    """
    base = assess_belief(belief.stamp_ns, belief.frame_id, belief.pose_covariance,
                         belief.twist_covariance, thresholds)
    unknown = SelfAssessmentLevel.UNKNOWN
    position, velocity, orientation = base.position, base.velocity, base.orientation
    if not all(math.isfinite(x) for x in belief.position):
        position = AxisAssessment(unknown, 0.0, REASON_NON_FINITE_POSITION)
    if not all(math.isfinite(x) for x in belief.velocity):
        velocity = AxisAssessment(unknown, 0.0, REASON_NON_FINITE_VELOCITY)
    q = belief.orientation_xyzw
    if not all(math.isfinite(x) for x in q) or sum(x * x for x in q) < 1e-12:
        orientation = AxisAssessment(unknown, 0.0, REASON_INVALID_ORIENTATION)
    if (position, velocity, orientation) == (base.position, base.velocity, base.orientation):
        return base
    return BeliefSelfAssessment(
        stamp_ns=base.stamp_ns, frame_id=base.frame_id,
        overall_level=worst_level(position.level, velocity.level, orientation.level),
        position=position, velocity=velocity, orientation=orientation,
        thresholds_sha256=base.thresholds_sha256, assessor_id=base.assessor_id,
        schema_version=base.schema_version)
