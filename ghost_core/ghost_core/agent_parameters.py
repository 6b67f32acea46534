"""The agent's node parameters as data: the one home of their defaults (pure).

The self-assessor, forward predictor, outcome evaluator and calibrator declare these
(``ghost_nodes.node_parameters`` puts them in its ``PARAMETERS`` table). ghost_core's
configuration dataclasses (``LoopConfig``, ``HysteresisConfig``, ``EvaluatorConfig``,
``PipelineConfig``) take their defaults from them, and config/ghost.yaml is generated from
them (``python -m ghost.param_docs --config``), so a node run alone
(``ros2 run ghost_nodes calibrator``), the shipped graph and the pure pipeline agree. The
scenarios keep the values SPEC section 7 states them with (``ghost_core.scenarios``).

It imports only the ParamSpec machinery, so every ghost_core module may import it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ghost_core.parameters import (
    at_least,
    at_most,
    below,
    non_negative,
    one_of,
    ParamSpec,
    positive,
)

__all__ = ['ACCURACY_PROFILE_NAMES', 'AGENT_PARAMETERS', 'CALIBRATOR', 'DEFAULT_PROFILE',
           'declared', 'FORWARD_PREDICTOR', 'INPUT_QOS_CHOICES', 'MAX_HYSTERESIS_S',
           'MAX_PROCESS_NOISE', 'MAX_WINDOW', 'NO_COVARIANCE_CHOICES', 'OUTCOME_EVALUATOR',
           'SELF_ASSESSOR']

#: Values of every ``input_qos`` parameter (the input subscriptions' reliability).
INPUT_QOS_CHOICES = ('best_effort', 'reliable')
#: Values of the self_assessor's no_covariance_level parameter.
NO_COVARIANCE_CHOICES = ('unknown', 'uncertain')
#: The accuracy profiles by name, in the order the docs list them (``ghost_core.profiles``
#: holds their thresholds; a test checks both name the same profiles).
ACCURACY_PROFILE_NAMES = ('gnss', 'rtk', 'indoor')
DEFAULT_PROFILE = 'gnss'

_BLOCKS = (('position', 'm'), ('velocity', 'm/s'), ('orientation', 'rad'))
#: What each block's thresholds judge: the orientation's the tilt, its heading only UNKNOWN.
_JUDGED = {'position': ('position', ''), 'velocity': ('velocity', ''),
           'orientation': ('tilt (rot x, y)', ', tilt or heading (rot z)')}

# Declared upper bounds (SPEC 5 v1.3: a recorded value outside them is a violation). Each is
# where a value stops meaning what the property it feeds promises, not a tuning:
#: The hysteresis durations (dwell, interval, bound R): a belief held worse for more than a
#: minute after it is healthy again is a monitor that has stopped judging, and RECOVERY-v1
#: with R beyond it promises nothing a flight would notice.
MAX_HYSTERESIS_S = 60.0
#: Q (m^2/s per axis): at 10, one 0.1 s period adds 1 m^2 per axis to every prediction, so no
#: metre-level drift could ever fall beyond 3 sigma: BAUD-v1 would hold vacuously by design.
MAX_PROCESS_NOISE = 10.0
#: W, in observed outcomes: the verifier recomputes each history from the last W outcomes it
#: keeps (ghost_verify.history.HISTORY_OUTCOME_LIMIT is 4096); M and K are at most W, since a
#: K larger than the window can never be reached and would switch drift detection off.
MAX_WINDOW = 1024


def _input_qos(topics: str) -> ParamSpec:
    return ParamSpec('input_qos', INPUT_QOS_CHOICES[0], f'Reliability of the {topics} '
                     "subscriptions: 'best_effort' matches best-effort and reliable publishers "
                     "alike, 'reliable' only reliable ones.", (one_of(INPUT_QOS_CHOICES),),
                     read_only=True)


SELF_ASSESSOR = (
    ParamSpec('accuracy_profile', DEFAULT_PROFILE, 'The accuracy the mission needs, which sets '
              "every threshold and the unconfirmed horizon below: 'gnss' (standalone GNSS, "
              "metre-level), 'rtk' (RTK-fixed, decimetre), 'indoor' (mocap/vision). "
              'docs/parameters.md lists their values.', (one_of(ACCURACY_PROFILE_NAMES),)),
    *(spec for block, unit in _BLOCKS for spec in (
        ParamSpec(f'{block}_known_max_std', 0.0,
                  f'Largest 1-sigma {_JUDGED[block][0]} std ({unit}) still judged KNOWN; 0 = '
                  "the accuracy profile's.", (non_negative,)),
        ParamSpec(f'{block}_uncertain_max_std', 0.0,
                  f'Largest 1-sigma {_JUDGED[block][0]} std ({unit}) still judged UNCERTAIN '
                  f"(beyond it{_JUDGED[block][1]}: UNKNOWN); 0 = the accuracy profile's.",
                  (non_negative,)))),
    ParamSpec('unconfirmed_horizon_s', -1.0, 'A belief no independent fix (observations) '
              'confirmed for longer than this (s) is at best UNCERTAIN; -1 = the accuracy '
              "profile's, 0 = never (a stack without independent fixes).", (at_least(-1),)),
    ParamSpec('no_covariance_level', NO_COVARIANCE_CHOICES[0], 'Level of a block that declares '
              "no uncertainty (all-zero covariance block, or ROS's -1 sentinel first): "
              "'unknown' or 'uncertain' (never KNOWN).", (one_of(NO_COVARIANCE_CHOICES),)),
    ParamSpec('recovery_margin', 0.2, 'Hysteresis: a block returns to a better level only when '
              'its std is <= (1 - margin) x the threshold it must clear.',
              (non_negative, below(1))),
    ParamSpec('recovery_dwell_s', 2.0, 'Hysteresis: ... for this long (s, belief stamps) '
              'without interruption.', (non_negative, at_most(MAX_HYSTERESIS_S))),
    ParamSpec('min_level_interval_s', 5.0, 'Hysteresis: ... and no sooner than this (s) after '
              "the block's last level change. Degradations are always immediate.",
              (non_negative, at_most(MAX_HYSTERESIS_S))),
    ParamSpec('recovery_bound_s', 5.0, 'Hysteresis bound: a block whose instantaneous level '
              'has been better for this long (s) without interruption is published at that '
              'level, margin and interval notwithstanding.',
              (non_negative, at_most(MAX_HYSTERESIS_S))),
    _input_qos('state/nav and observations'),
)

FORWARD_PREDICTOR = (
    ParamSpec('period_s', 0.1, 'Cycle period (s): the prediction horizon, i.e. the next '
              'belief is expected period_s after this one.', (positive,), read_only=True),
    ParamSpec('process_noise', 0.05, 'Process noise Q (m^2/s per axis) added as Q*period to '
              'the predicted position covariance.', (non_negative, at_most(MAX_PROCESS_NOISE))),
    _input_qos('state/nav'),
)

OUTCOME_EVALUATOR = (
    ParamSpec('grace_cycles', 3, 'A cycle whose prediction has not arrived when this many later '
              'beliefs have is resolved without it.', (at_least(1),), read_only=True),
    ParamSpec('max_observation_lag_s', 0.25,
              'A fix belongs to the first cycle whose stamp is >= its own; the cycle waits for '
              'such fixes until a belief stamped this much later (s) has arrived. Covers GNSS '
              'latency (EKF2_GPS_DELAY ~0.11 s); it also delays each decision by up to this.',
              (non_negative,), read_only=True),
    # 1e4 m² is sigma > 100 m: ROS drivers mark an axis they do not measure with a huge
    # variance (1e6 and up are common), and no fix that weak could tell KNOWN from wrong.
    ParamSpec('unmeasured_variance_m2', 1.0e4,
              'An observation axis whose variance (m^2) is above this is not measured: the '
              'distance uses the remaining axes, with their own degrees of freedom.',
              (positive,), read_only=True),
    ParamSpec('idle_flush_s', 1.0, 'When no input has arrived for this long (wall clock, s), '
              'pending cycles are resolved with what has arrived (the input stream ended or '
              'paused); 0 = never.', (non_negative,), read_only=True),
    _input_qos('state/nav and observations'),
)

# K = 3, not SPEC §5's reference 2 (MahalanobisDowngradePolicy's "defaults M=4, K=2"): the
# default is what a vehicle runs with (`ros2 run ghost_nodes calibrator` alone, any parameter
# file that leaves K unset). On a consistent estimator (outcomes beyond 3 sigma at the 1-D
# rate, 0.27 %) K = 2 of W = 32 gives about 7.6 false HOLD episodes per flight hour and K = 3
# gives 0-0.4, at the same detection latency on drift_then_recovery and gnss_outage
# (docs/real-data.md, bench/judgement.py). The scenarios keep SPEC §7's K = 2, stated with
# them (ghost_core.scenarios, config/scenarios/*.yaml).
CALIBRATOR = (
    ParamSpec('min_outcomes', 4, 'M: observed outcomes needed before a downgrade is allowed '
              '(at most W).', (at_least(1), at_most(MAX_WINDOW))),
    ParamSpec('downgrade_threshold', 3, 'K: outcomes beyond 3 sigma (beyond_3 + beyond_5) in '
              'the window that trigger a downgrade. 3, not the SPEC reference 2: far fewer '
              'false HOLDs on a consistent estimator at the same detection latency '
              '(docs/real-data.md); the scenarios use K = 2. At most W.',
              (at_least(1), at_most(MAX_WINDOW))),
    ParamSpec('max_history', 32, 'W: the window, in observed outcomes.',
              (at_least(1), at_most(MAX_WINDOW)), read_only=True),
)

#: The agent nodes' parameters (beside every node's common ones), by node name.
AGENT_PARAMETERS: Mapping[str, tuple[ParamSpec, ...]] = {
    'self_assessor': SELF_ASSESSOR,
    'forward_predictor': FORWARD_PREDICTOR,
    'outcome_evaluator': OUTCOME_EVALUATOR,
    'calibrator': CALIBRATOR,
}


def declared(node: str, name: str) -> Any:
    """The declared default of ``node``'s parameter ``name`` (KeyError when there is none)."""
    for spec in AGENT_PARAMETERS[node]:
        if spec.name == name:
            return spec.default
    raise KeyError(f'{node} declares no parameter {name!r}')
