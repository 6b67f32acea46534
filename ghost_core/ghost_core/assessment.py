"""Reference self-assessor: levels from the belief covariance against configured thresholds.

One cohesive job, kept in one module: the assessor ASSESSOR_ID names, config to hysteresis.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
import math

from ghost_core.agent_parameters import ACCURACY_PROFILE_NAMES, declared, MAX_HYSTERESIS_S
from ghost_core.contracts import AxisAssessment, BeliefSelfAssessment, EVIDENCE_SCHEMA_VERSION
from ghost_core.errors import ConfigError, ContractError
from ghost_core.geometry import block3, covariance_defect
from ghost_core.hashing import content_address, IdentityMemo
from ghost_core.levels import SelfAssessmentLevel, worst_level
from ghost_core.samples import (
    BeliefSample,
    COVARIANCE_UNKNOWN_SENTINEL,
    has_no_covariance_information,
)

__all__ = [
    'ASSESSOR_ID',
    'BLOCK_NAMES',
    'NO_COVARIANCE_LEVELS',
    'REASON_BEYOND_UNCERTAIN',
    'REASON_ESTIMATOR_INVALID',
    'REASON_HEADING_BEYOND_UNCERTAIN',
    'REASON_HYSTERESIS',
    'REASON_NO_COVARIANCE',
    'REASON_INVALID_ORIENTATION',
    'REASON_NON_FINITE_POSITION',
    'REASON_NON_FINITE_VELOCITY',
    'REASON_UNCONFIRMED',
    'REASON_WITHIN_KNOWN',
    'REASON_WITHIN_UNCERTAIN',
    'BlockThresholds',
    'HysteresisConfig',
    'SelfAssessor',
    'ThresholdsConfig',
    'assess_belief',
    'assess_belief_sample',
    'assess_block',
    'declares_invalid',
]

#: assessor_id of the reference self-assessor: covariance thresholds with the no-covariance
#: rule, the estimator's own invalid flag, the heading judged apart from the tilt (v4), the
#: unconfirmed horizon and bounded hysteresis.
ASSESSOR_ID = 'covariance_threshold_hysteresis_v4'
#: The judged blocks of a belief, in message order.
BLOCK_NAMES = ('position', 'velocity', 'orientation')

REASON_WITHIN_KNOWN = 'within_known_threshold'
REASON_WITHIN_UNCERTAIN = 'within_uncertain_threshold'
REASON_BEYOND_UNCERTAIN = 'beyond_uncertain_threshold'
#: The orientation block whose heading (rotation about the world z axis) std is beyond the
#: block's uncertain_max_std: UNKNOWN, whatever the tilt.
REASON_HEADING_BEYOND_UNCERTAIN = 'heading_beyond_uncertain_threshold'
REASON_NO_COVARIANCE = 'no_covariance_information'
#: A block kept at a worse level than its instantaneous one until its recovery is confirmed.
REASON_HYSTERESIS = 'held_by_hysteresis'
#: Per block: the estimator declares the block invalid (+inf on its diagonal: PX4's xy_valid,
#: z_valid, v_xy_valid or v_z_valid false, as the PX4 importer and bridge write it).
REASON_ESTIMATOR_INVALID = {'position': 'estimator_position_invalid',
                            'velocity': 'estimator_velocity_invalid',
                            'orientation': 'estimator_orientation_invalid'}
#: The position block of a belief no independent observation confirmed within the horizon.
REASON_UNCONFIRMED = 'unconfirmed_beyond_horizon'


@dataclass(frozen=True, slots=True)
class BlockThresholds:
    """Thresholds of one block on its largest 1-sigma standard deviation.

    max_std <= known_max_std gives KNOWN; <= uncertain_max_std gives UNCERTAIN; above, UNKNOWN.
    The orientation block's heading is judged against uncertain_max_std alone (assess_block).
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


#: The level a block that declares no uncertainty gets unless configured (the declared one).
_NO_COVARIANCE_DEFAULT = SelfAssessmentLevel[
    declared('self_assessor', 'no_covariance_level').upper()]
#: Levels a block that declares no uncertainty may be given (never KNOWN).
NO_COVARIANCE_LEVELS: frozenset[SelfAssessmentLevel] = frozenset(
    {SelfAssessmentLevel.UNCERTAIN, SelfAssessmentLevel.UNKNOWN})


@dataclass(frozen=True, slots=True)
class HysteresisConfig:
    """How the published level of a block may move (SPEC §5 v1.1, hysteresis and dwell).

    A worse level is published at once. A better level L only when the block's statistic has
    earned L or better by a margin (max_std <= (1 - recovery_margin) x the threshold it must
    clear) for recovery_dwell_ns without interruption, and at least min_level_interval_ns
    after the block's last level change (the best such L; while a better level's dwell is
    under way, it is waited for).
    So a statistic hovering at a threshold cannot flip the level: after a degradation the
    block stays degraded for at least min_level_interval_ns.

    The hold is bounded (SPEC §5 v1.2): a block whose instantaneous level has been L or better
    without interruption for recovery_bound_ns is published at L or better, whatever the
    margin and the interval say. So a statistic that stays inside the margin band (between
    (1 - margin) x threshold and the threshold) is KNOWN after recovery_bound_ns, not never.
    Invariants: 0 <= recovery_margin < 1; the durations are integers in [0, 60 s] (all 0
    disables; ``agent_parameters.MAX_HYSTERESIS_S``).
    The defaults are the self_assessor's declared ones (``ghost_core.agent_parameters``).
    """

    recovery_margin: float = declared('self_assessor', 'recovery_margin')
    recovery_dwell_ns: int = round(declared('self_assessor', 'recovery_dwell_s') * 1e9)
    min_level_interval_ns: int = round(declared('self_assessor', 'min_level_interval_s') * 1e9)
    recovery_bound_ns: int = round(declared('self_assessor', 'recovery_bound_s') * 1e9)

    def __post_init__(self) -> None:
        """Enforce the invariants above, normalising field types."""
        margin = self.recovery_margin
        if (isinstance(margin, bool) or not isinstance(margin, (int, float))
                or not 0.0 <= margin < 1.0):
            raise ConfigError(f'HysteresisConfig.recovery_margin must be a number in [0, 1), '
                              f'got {margin!r}')
        object.__setattr__(self, 'recovery_margin', float(margin))
        for name in ('recovery_dwell_ns', 'min_level_interval_ns', 'recovery_bound_ns'):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise ConfigError(f'HysteresisConfig.{name} must be an integer >= 0, '
                                  f'got {value!r}')
            if value > MAX_HYSTERESIS_S * 1e9:
                raise ConfigError(f'HysteresisConfig.{name} must be at most '
                                  f'{MAX_HYSTERESIS_S:g} s (its declared bound), got {value} ns')

    def to_dict(self) -> dict[str, float | int]:
        """Return the settings as the dict that is content-addressed."""
        return {'min_level_interval_ns': self.min_level_interval_ns,
                'recovery_bound_ns': self.recovery_bound_ns,
                'recovery_dwell_ns': self.recovery_dwell_ns,
                'recovery_margin': self.recovery_margin}


@dataclass(frozen=True, slots=True)
class ThresholdsConfig:
    """Everything the reference self-assessor judges with (m, m/s, rad; ns).

    Per-block thresholds; the level given to a block that declares no uncertainty (UNKNOWN by
    default, UNCERTAIN allowed, KNOWN never); the hysteresis; the unconfirmed horizon: a
    belief whose last independent observation (a finite fix on /observations) is more than
    unconfirmed_horizon_ns older than it is at best UNCERTAIN (0 disables: for a stack with no
    independent fix); `accuracy_profile`, the profile (``ghost_core.profiles``) the thresholds
    not given explicitly were taken from ('' when none was: every value given directly), so a
    reader names it without guessing it back from the numbers. Content-addressed: `sha256` =
    content_address(to_dict()), published as thresholds_sha256.
    """

    position: BlockThresholds = field(default_factory=lambda: BlockThresholds(0.5, 2.0))
    velocity: BlockThresholds = field(default_factory=lambda: BlockThresholds(0.5, 2.0))
    orientation: BlockThresholds = field(default_factory=lambda: BlockThresholds(0.1, 0.35))
    no_covariance_level: SelfAssessmentLevel = _NO_COVARIANCE_DEFAULT
    hysteresis: HysteresisConfig = field(default_factory=HysteresisConfig)
    unconfirmed_horizon_ns: int = 0
    accuracy_profile: str = ''

    def __post_init__(self) -> None:
        """Enforce the invariants above, normalising field types."""
        if self.accuracy_profile not in ('', *ACCURACY_PROFILE_NAMES):
            raise ConfigError(f'ThresholdsConfig.accuracy_profile must be one of '
                              f'{", ".join(ACCURACY_PROFILE_NAMES)} or \'\', '
                              f'got {self.accuracy_profile!r}')
        horizon = self.unconfirmed_horizon_ns
        if isinstance(horizon, bool) or not isinstance(horizon, int) or horizon < 0:
            raise ConfigError(f'ThresholdsConfig.unconfirmed_horizon_ns must be an integer '
                              f'>= 0, got {horizon!r}')
        for name in ('position', 'velocity', 'orientation'):
            value = getattr(self, name)
            if not isinstance(value, BlockThresholds):
                raise ConfigError(f'ThresholdsConfig.{name} must be a BlockThresholds, '
                                  f'got {value!r}')
        level = self.no_covariance_level
        if isinstance(level, bool) or level not in NO_COVARIANCE_LEVELS:
            raise ConfigError('ThresholdsConfig.no_covariance_level must be UNCERTAIN or '
                              f'UNKNOWN (not knowing the uncertainty is not certainty), '
                              f'got {level!r}')
        object.__setattr__(self, 'no_covariance_level', SelfAssessmentLevel(level))
        if not isinstance(self.hysteresis, HysteresisConfig):
            raise ConfigError(f'ThresholdsConfig.hysteresis must be a HysteresisConfig, '
                              f'got {self.hysteresis!r}')

    def block(self, name: str) -> BlockThresholds:
        """Return the thresholds of block `name` (position, velocity or orientation)."""
        value = getattr(self, name)
        assert isinstance(value, BlockThresholds)
        return value

    def to_dict(self) -> dict[str, object]:
        """Return the configuration as the dict whose content address is thresholds_sha256."""
        return {
            'accuracy_profile': self.accuracy_profile,
            'hysteresis': self.hysteresis.to_dict(),
            'no_covariance_level': self.no_covariance_level.name.lower(),
            'orientation': self.orientation.to_dict(),
            'position': self.position.to_dict(),
            'unconfirmed_horizon_ns': self.unconfirmed_horizon_ns,
            'velocity': self.velocity.to_dict(),
        }

    @property
    def sha256(self) -> str:
        """The content address of this configuration (computed once per configuration)."""
        return _THRESHOLDS_ADDRESSES.get(self, _thresholds_address)


#: The addresses of the configurations in use (one per run, a few when reconfigured).
_THRESHOLDS_ADDRESSES: IdentityMemo[ThresholdsConfig, str] = IdentityMemo(16)


def _thresholds_address(config: ThresholdsConfig) -> str:
    return content_address(config.to_dict())


def declares_invalid(covariance: Sequence[float]) -> bool:
    """Whether a 3x3 block declares itself invalid: +inf on its diagonal, no NaN anywhere.

    An unbounded variance is how an estimator says it does not know that block at all; the
    PX4 importer and bridge write it for a block PX4 flags invalid (docs/real-data.md).
    """
    return (any(covariance[k] == math.inf for k in (0, 4, 8))
            and not any(math.isnan(x) or x == -math.inf for x in covariance))


def assess_block(
    covariance: Sequence[float],
    thresholds: BlockThresholds,
    no_covariance_level: SelfAssessmentLevel = _NO_COVARIANCE_DEFAULT,
    invalid_reason: str = REASON_ESTIMATOR_INVALID['position'],
    *,
    heading: bool = False,
) -> AxisAssessment:
    """Return the instantaneous assessment of one 3x3 covariance block (row-major).

    A block that declares no uncertainty (all zeros, or ROS's -1 sentinel first) gets
    `no_covariance_level` with reason no_covariance_information; a block the estimator
    declares invalid (declares_invalid) is UNKNOWN with `invalid_reason`; a block with NaN or
    -inf, a negative variance, asymmetry or that is not positive semi-definite is UNKNOWN with
    the defect as reason. All have max_std 0.0, and none is ever KNOWN.

    Otherwise the level comes from the block's largest std (BlockThresholds.level_of), and
    max_std reports the std the level was judged on. With `heading` (the orientation block:
    rot x, rot y, rot z about the world axes, REP-103) only the tilt axes x and y are judged
    that way; the heading (z, the last diagonal element) is judged against
    uncertain_max_std alone: beyond it the block is UNKNOWN (reason
    heading_beyond_uncertain_threshold, max_std the heading std) unless the tilt already is;
    within it the heading does not lower the block. A GNSS-aided estimator carries its
    heading's effect on navigation in its velocity and position covariance, which are judged
    on their own; EKF3 declares a heading std near its compass noise (0.5 rad by default)
    after every in-flight yaw alignment (docs/contracts.md).
    """
    if has_no_covariance_information(covariance):
        return AxisAssessment(no_covariance_level, 0.0, REASON_NO_COVARIANCE)
    if declares_invalid(covariance):
        return AxisAssessment(SelfAssessmentLevel.UNKNOWN, 0.0, invalid_reason)
    defect = covariance_defect(covariance)
    if defect is not None:
        return AxisAssessment(SelfAssessmentLevel.UNKNOWN, 0.0, defect)
    judged = (covariance[0], covariance[4]) if heading else (
        covariance[0], covariance[4], covariance[8])
    max_std = math.sqrt(max(judged))
    level, reason = thresholds.level_of(max_std)
    if heading and level != SelfAssessmentLevel.UNKNOWN:
        heading_std = math.sqrt(covariance[8])
        if heading_std > thresholds.uncertain_max_std:
            return AxisAssessment(SelfAssessmentLevel.UNKNOWN, heading_std,
                                  REASON_HEADING_BEYOND_UNCERTAIN)
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
    x, y, z block of the pose covariance; orientation = its rotation block, its tilt (rot x,
    rot y) and its heading (rot z) judged apart (assess_block with heading); velocity = the
    linear block of the twist covariance. The overall level is the worst block. A 6x6 matrix
    whose first element is ROS's -1 sentinel declares every block of it unknown. Stateless:
    no hysteresis (see SelfAssessor).
    """
    config = ThresholdsConfig() if thresholds is None else thresholds
    pose = _covariance36('pose_covariance', pose_covariance)
    twist = _covariance36('twist_covariance', twist_covariance)
    unknown_pose = pose[0] == COVARIANCE_UNKNOWN_SENTINEL
    unknown_twist = twist[0] == COVARIANCE_UNKNOWN_SENTINEL
    level = config.no_covariance_level
    position = _unknown_block(level) if unknown_pose else assess_block(
        block3(pose, 0, 0), config.position, level, REASON_ESTIMATOR_INVALID['position'])
    orientation = _unknown_block(level) if unknown_pose else assess_block(
        block3(pose, 3, 3), config.orientation, level, REASON_ESTIMATOR_INVALID['orientation'],
        heading=True)
    velocity = _unknown_block(level) if unknown_twist else assess_block(
        block3(twist, 0, 0), config.velocity, level, REASON_ESTIMATOR_INVALID['velocity'])
    return BeliefSelfAssessment(
        stamp_ns=stamp_ns,
        frame_id=frame_id,
        overall_level=worst_level(position.level, velocity.level, orientation.level),
        position=position,
        velocity=velocity,
        orientation=orientation,
        thresholds_sha256=config.sha256,
        assessor_id=ASSESSOR_ID,
        schema_version=EVIDENCE_SCHEMA_VERSION,
    )


def _unknown_block(level: SelfAssessmentLevel) -> AxisAssessment:
    return AxisAssessment(level, 0.0, REASON_NO_COVARIANCE)


#: Reasons given to a block whose state values (not its covariance) are unusable.
REASON_NON_FINITE_POSITION = 'non_finite_position'
REASON_NON_FINITE_VELOCITY = 'non_finite_velocity'
REASON_INVALID_ORIENTATION = 'invalid_orientation'


#: The last few beliefs' raw assessments, with the configuration each was judged with: a
#: verification pass judges a belief as the assessor (the re-run) and again for RECOVERY-v1.
_ASSESSED: IdentityMemo[BeliefSample, tuple[ThresholdsConfig | None, BeliefSelfAssessment]] = (
    IdentityMemo(64))


def assess_belief_sample(
    belief: BeliefSample, thresholds: ThresholdsConfig | None = None
) -> BeliefSelfAssessment:
    """Return the raw self-assessment of a whole belief: its covariances and its values.

    As `assess_belief`, and further: a position or velocity with NaN/inf makes that block
    UNKNOWN (reason non_finite_position / non_finite_velocity); an orientation quaternion that
    is not finite or has (near) zero norm makes the orientation block UNKNOWN (reason
    invalid_orientation). A belief whose values are garbage is never KNOWN, whatever
    covariance it declares. Pure: the same belief judged again with the same configuration
    object is not computed again.
    """
    judged_with, assessment = _ASSESSED.get(
        belief, lambda sample: (thresholds, _assess_belief_sample(sample, thresholds)))
    if judged_with is thresholds:
        return assessment
    return _assess_belief_sample(belief, thresholds)


def _assess_belief_sample(
    belief: BeliefSample, thresholds: ThresholdsConfig | None
) -> BeliefSelfAssessment:
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
        confirmation_stamp_ns=base.confirmation_stamp_ns,
        previous_stamp_ns=base.previous_stamp_ns, schema_version=base.schema_version)


@dataclass(slots=True)
class _BlockState:
    level: SelfAssessmentLevel
    # Stamp of the block's last level change; None until it has changed once (the first
    # published level is where the stream starts, not a change).
    changed_ns: int | None = None
    # Runs, each None when it is not running now: since when the level earned with the
    # margin has been KNOWN / UNCERTAIN-or-better without interruption (the dwell), and since
    # when the instantaneous level has been KNOWN / UNCERTAIN-or-better (the bound).
    margin_known_since_ns: int | None = None
    margin_uncertain_since_ns: int | None = None
    known_since_ns: int | None = None
    uncertain_since_ns: int | None = None


class SelfAssessor:
    """The reference self-assessor with hysteresis: one instance per belief stream (stateful).

    Each belief is first judged instantaneously (assess_belief_sample); its position block is
    then capped at UNCERTAIN when no independent observation (``observe``) confirmed it within
    the unconfirmed horizon (reason unconfirmed_beyond_horizon); the age is measured from the
    latest observation stamp received, or from the first belief before any. Then, per block,
    the published level follows HysteresisConfig: worse at once, better only by a margin,
    after a dwell and a minimum interval since the block's last change, and in any case once
    the instantaneous level has been better for recovery_bound_ns. A block held worse than its
    instantaneous level says so (reason held_by_hysteresis; max_std stays the measured one).
    Time is the belief and observation stamps (simulation or log time), never the wall clock,
    so a replay of the same inputs in the same order gives the same levels. The first belief
    is published as judged.
    """

    def __init__(self, thresholds: ThresholdsConfig | None = None) -> None:
        self.thresholds = ThresholdsConfig() if thresholds is None else thresholds
        self._states: dict[str, _BlockState] = {}
        self._confirmed_ns: int | None = None
        self._first_belief_ns: int | None = None
        self._previous_ns: int | None = None

    @property
    def confirmed_ns(self) -> int | None:
        """The stamp of the latest finite observation received (None before any)."""
        return self._confirmed_ns

    def assess_confirmed(self, belief: BeliefSample,
                         confirmed_ns: int | None) -> BeliefSelfAssessment:
        """As ``assess``, with the confirmation the assessor had when `belief` arrived.

        A replay judges a belief after later fixes were taken, and a re-derivation with the
        confirmation its recorded assessment names; this gives the judgement that confirmation
        (the observations are left as they are).
        """
        latest, self._confirmed_ns = self._confirmed_ns, confirmed_ns
        try:
            return self.assess(belief)
        finally:
            self._confirmed_ns = latest

    def observe(self, stamp_ns: int, position: Sequence[float]) -> None:
        """Take an independent observation (a fix): a finite one confirms up to its stamp."""
        if not all(math.isfinite(x) for x in position):
            return
        if self._confirmed_ns is None or stamp_ns > self._confirmed_ns:
            self._confirmed_ns = stamp_ns

    def unconfirmed_ns(self, stamp_ns: int) -> int:
        """How long before ``stamp_ns`` the last confirmation was (0 when at or after it)."""
        reference = self._confirmed_ns if self._confirmed_ns is not None else (
            self._first_belief_ns if self._first_belief_ns is not None else stamp_ns)
        return max(0, stamp_ns - reference)

    def assess(self, belief: BeliefSample) -> BeliefSelfAssessment:
        """Return the published assessment of `belief` (stamps must increase)."""
        if self._first_belief_ns is None:
            self._first_belief_ns = belief.stamp_ns
        instant = self._confirmation(assess_belief_sample(belief, self.thresholds),
                                     belief.stamp_ns)
        published = tuple(self._publish(name, getattr(instant, name), belief.stamp_ns)
                          for name in BLOCK_NAMES)
        # The inputs it was judged from (SPEC 5, v1.3): the confirmation and the belief before.
        named = replace(instant, confirmation_stamp_ns=self._confirmed_ns,
                        previous_stamp_ns=self._previous_ns)
        self._previous_ns = belief.stamp_ns
        if published == (instant.position, instant.velocity, instant.orientation):
            return named
        return _with_blocks(named, published)

    def _confirmation(self, instant: BeliefSelfAssessment,
                      stamp_ns: int) -> BeliefSelfAssessment:
        horizon = self.thresholds.unconfirmed_horizon_ns
        position = instant.position
        if (horizon == 0 or position.level != SelfAssessmentLevel.KNOWN
                or self.unconfirmed_ns(stamp_ns) <= horizon):
            return instant
        capped = AxisAssessment(SelfAssessmentLevel.UNCERTAIN, position.max_std,
                                REASON_UNCONFIRMED)
        return _with_blocks(instant, (capped, instant.velocity, instant.orientation))

    def _publish(self, name: str, instant: AxisAssessment, stamp_ns: int) -> AxisAssessment:
        recovered = self._recovery_level(name, instant)
        state = self._states.get(name)
        if state is None:
            state = self._states[name] = _BlockState(instant.level)
            _track_runs(state, instant.level, recovered, stamp_ns)
            return instant
        _track_runs(state, instant.level, recovered, stamp_ns)
        if instant.level >= state.level:
            # Worse (or the same): at once. A worse level always starts a new interval.
            if instant.level > state.level:
                state.level, state.changed_ns = instant.level, stamp_ns
            return instant
        hysteresis = self.thresholds.hysteresis
        bounded = _run_level(state.known_since_ns, state.uncertain_since_ns, stamp_ns,
                             hysteresis.recovery_bound_ns)
        if bounded is not None and bounded < state.level:
            return self._promote(state, bounded, instant, stamp_ns)
        dwelt = _run_level(state.margin_known_since_ns, state.margin_uncertain_since_ns,
                           stamp_ns, hysteresis.recovery_dwell_ns)
        # A better level whose dwell is under way is waited for (at most one dwell: its run
        # completes or breaks), so a recovery is one step, not UNKNOWN -> UNCERTAIN -> KNOWN
        # a few cycles apart.
        better_running = (dwelt == SelfAssessmentLevel.UNCERTAIN
                          and state.margin_known_since_ns is not None)
        if (dwelt is not None and dwelt < state.level and not better_running
                and (state.changed_ns is None
                     or stamp_ns - state.changed_ns >= hysteresis.min_level_interval_ns)):
            return self._promote(state, dwelt, instant, stamp_ns)
        return AxisAssessment(state.level, instant.max_std, REASON_HYSTERESIS)

    @staticmethod
    def _promote(state: _BlockState, target: SelfAssessmentLevel, instant: AxisAssessment,
                 stamp_ns: int) -> AxisAssessment:
        state.level, state.changed_ns = target, stamp_ns
        if target == instant.level:
            return instant
        return AxisAssessment(target, instant.max_std, REASON_HYSTERESIS)

    def _recovery_level(self, name: str, instant: AxisAssessment) -> SelfAssessmentLevel:
        """The level the block's statistic earns with the thresholds shrunk by the margin."""
        if instant.reason not in _THRESHOLD_REASONS:
            # A level that does not come from the thresholds (cannot be better than UNKNOWN
            # by a margin) is taken as it is.
            return instant.level
        factor = 1.0 - self.thresholds.hysteresis.recovery_margin
        block = self.thresholds.block(name)
        if instant.max_std <= block.known_max_std * factor:
            return SelfAssessmentLevel.KNOWN
        if instant.max_std <= block.uncertain_max_std * factor:
            return SelfAssessmentLevel.UNCERTAIN
        return SelfAssessmentLevel.UNKNOWN


def _track_runs(state: _BlockState, level: SelfAssessmentLevel,
                recovered: SelfAssessmentLevel, stamp_ns: int) -> None:
    """Start or break the four runs with this sample's instantaneous and margin levels."""
    known, uncertain = SelfAssessmentLevel.KNOWN, SelfAssessmentLevel.UNCERTAIN

    def run(since: int | None, holds: bool) -> int | None:
        return (stamp_ns if since is None else since) if holds else None

    state.known_since_ns = run(state.known_since_ns, level == known)
    state.uncertain_since_ns = run(state.uncertain_since_ns, level <= uncertain)
    state.margin_known_since_ns = run(state.margin_known_since_ns, recovered == known)
    state.margin_uncertain_since_ns = run(state.margin_uncertain_since_ns,
                                          recovered <= uncertain)


def _run_level(known_since_ns: int | None, uncertain_since_ns: int | None, stamp_ns: int,
               duration_ns: int) -> SelfAssessmentLevel | None:
    """The best level whose run has lasted ``duration_ns`` at ``stamp_ns``, or None."""
    if known_since_ns is not None and stamp_ns - known_since_ns >= duration_ns:
        return SelfAssessmentLevel.KNOWN
    if uncertain_since_ns is not None and stamp_ns - uncertain_since_ns >= duration_ns:
        return SelfAssessmentLevel.UNCERTAIN
    return None


def _with_blocks(base: BeliefSelfAssessment,
                 blocks: tuple[AxisAssessment, ...]) -> BeliefSelfAssessment:
    return BeliefSelfAssessment(
        stamp_ns=base.stamp_ns, frame_id=base.frame_id,
        overall_level=worst_level(*(block.level for block in blocks)),
        position=blocks[0], velocity=blocks[1], orientation=blocks[2],
        thresholds_sha256=base.thresholds_sha256, assessor_id=base.assessor_id,
        confirmation_stamp_ns=base.confirmation_stamp_ns,
        previous_stamp_ns=base.previous_stamp_ns, schema_version=base.schema_version)


_THRESHOLD_REASONS = frozenset({REASON_WITHIN_KNOWN, REASON_WITHIN_UNCERTAIN,
                                REASON_BEYOND_UNCERTAIN})
