"""Accuracy profiles: the self-assessor's thresholds and unconfirmed horizon, named by use.

A profile says what accuracy a mission needs and what fixes confirm the belief. The shipped
configuration selects one with the self_assessor parameter ``accuracy_profile`` (default
``gnss``); any threshold given explicitly wins over the profile's. How each number was chosen
is in docs/parameters.md ("Accuracy profiles").

Thresholds are on the largest 1-sigma standard deviation of a block, per axis. PX4 states its
horizontal accuracy as eph = sqrt(σN² + σE²), so a per-axis σ is eph / sqrt(2).

The unconfirmed horizon is how long a belief may go without an independent fix before it is
at best UNCERTAIN: the time for inertial dead reckoning to use up the KNOWN position
threshold, t = sqrt(2 σ_known / b) with a residual accelerometer bias b = 0.2 m/s² (an
EKF-calibrated consumer IMU), rounded down to 0.1 s, and at least three periods of the slowest
fix rate the profile expects (two lost fixes are not an outage).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
import math

from ghost_core.agent_parameters import DEFAULT_PROFILE
from ghost_core.assessment import BlockThresholds, HysteresisConfig, ThresholdsConfig
from ghost_core.errors import ConfigError
from ghost_core.levels import SelfAssessmentLevel

__all__ = ['ACCURACY_PROFILES', 'DEFAULT_PROFILE', 'DEAD_RECKONING_BIAS_M_S2',
           'AccuracyProfile', 'accuracy_profile', 'dead_reckoning_horizon_s']

#: Residual accelerometer bias (m/s²) an EKF leaves on a consumer IMU: what dead reckoning
#: integrates into a position error of b t² / 2 once fixes stop.
DEAD_RECKONING_BIAS_M_S2 = 0.2


def dead_reckoning_horizon_s(known_max_std_m: float, slowest_fix_hz: float) -> float:
    """The unconfirmed horizon of a profile (s): see the module docstring."""
    drift = math.floor(math.sqrt(2.0 * known_max_std_m / DEAD_RECKONING_BIAS_M_S2) * 10) / 10
    return max(drift, 3.0 / slowest_fix_hz)


@dataclass(frozen=True, slots=True)
class AccuracyProfile:
    """A named accuracy requirement: block thresholds, the fix rate expected, its meaning."""

    name: str
    meaning: str
    position: BlockThresholds
    velocity: BlockThresholds
    orientation: BlockThresholds
    slowest_fix_hz: float

    @property
    def unconfirmed_horizon_s(self) -> float:
        """How long a belief may go unconfirmed before it is at best UNCERTAIN (s)."""
        return dead_reckoning_horizon_s(self.position.known_max_std, self.slowest_fix_hz)

    def thresholds(self, hysteresis: HysteresisConfig | None = None,
                   no_covariance_level: SelfAssessmentLevel = SelfAssessmentLevel.UNKNOWN
                   ) -> ThresholdsConfig:
        """The self-assessor configuration of this profile."""
        return ThresholdsConfig(
            position=self.position, velocity=self.velocity, orientation=self.orientation,
            no_covariance_level=no_covariance_level,
            hysteresis=HysteresisConfig() if hysteresis is None else hysteresis,
            unconfirmed_horizon_ns=round(self.unconfirmed_horizon_s * 1e9),
            accuracy_profile=self.name)

    def describe(self) -> str:
        """One line: the thresholds as PX4 users read them (eph) and the horizon."""
        p, v, o = self.position, self.velocity, self.orientation
        root2 = math.sqrt(2.0)
        return (f'position KNOWN while σ <= {p.known_max_std:g} m per axis '
                f'(eph <= {p.known_max_std * root2:.2f} m), UNKNOWN beyond '
                f'{p.uncertain_max_std:g} m (eph > {p.uncertain_max_std * root2:.2f} m); '
                f'velocity KNOWN <= {v.known_max_std:g} m/s (evh <= '
                f'{v.known_max_std * root2:.2f}), UNKNOWN beyond {v.uncertain_max_std:g} m/s '
                f'(evh > {v.uncertain_max_std * root2:.2f}); '
                f'orientation: tilt KNOWN <= {o.known_max_std:g} rad, tilt or heading '
                f'UNKNOWN beyond {o.uncertain_max_std:g} rad; unconfirmed horizon '
                f'{self.unconfirmed_horizon_s:g} s')


#: The profiles by name (``ghost_core.agent_parameters.ACCURACY_PROFILE_NAMES``, in its order;
#: ``DEFAULT_PROFILE`` is the self_assessor's declared one). gnss: PX4's own failsafe bounds
#: (COM_POS_FS_EPH 5 m, COM_VEL_FS_EVH 1 m/s) are UNKNOWN, and a healthy standalone receiver
#: (eph 0.3-1.0 m) is KNOWN; a heading error of 0.5 rad (29°) is where a multicopter's position
#: loop starts to circle ("toilet-bowling"), so it is UNKNOWN, and KNOWN keeps a factor 2.5
#: below it.
ACCURACY_PROFILES: Mapping[str, AccuracyProfile] = {
    'gnss': AccuracyProfile(
        'gnss', 'a multicopter on standalone GNSS (metre-level missions: survey, delivery '
        'corridor, inspection at a distance)',
        BlockThresholds(1.0, 2.5), BlockThresholds(0.5, 0.7), BlockThresholds(0.2, 0.5),
        slowest_fix_hz=1.0),
    'rtk': AccuracyProfile(
        'rtk', 'RTK-fixed GNSS (decimetre missions: precision landing, close inspection)',
        BlockThresholds(0.1, 0.5), BlockThresholds(0.2, 0.5), BlockThresholds(0.05, 0.2),
        slowest_fix_hz=5.0),
    'indoor': AccuracyProfile(
        'indoor', 'motion capture or vision fixes indoors (decimetre missions near walls)',
        BlockThresholds(0.2, 0.5), BlockThresholds(0.3, 0.7), BlockThresholds(0.1, 0.35),
        slowest_fix_hz=10.0),
}


def accuracy_profile(name: str) -> AccuracyProfile:
    """The profile called ``name``; ConfigError naming the known ones otherwise."""
    profile = ACCURACY_PROFILES.get(name)
    if profile is None:
        raise ConfigError(f'accuracy_profile must be one of {", ".join(ACCURACY_PROFILES)}, '
                          f'got {name!r}')
    return profile
