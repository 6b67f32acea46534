"""The field table of every ghost message: GENERATED from ghost_interfaces/msg/*.msg.

Do not edit: run `python -m ghost_core.msg_codegen ghost_interfaces/msg
ghost_core/ghost_core/msg_fields.py` (ghost_core/test/test_msg_fields.py checks it).
Ghost messages are keyed by their short name, the types they use from other packages
by 'package/Name'. A field is (name, type) with the type as the .msg spells it.
"""

from collections.abc import Mapping
from types import MappingProxyType

__all__ = ['MESSAGE_FIELDS']

#: Per message, its fields in .msg order: (name, type).
MESSAGE_FIELDS: Mapping[str, tuple[tuple[str, str], ...]] = MappingProxyType({
    'ActionEmission': (
        ('header', 'std_msgs/Header'),
        ('decision', 'Decision'),
        ('rationale_sha256', 'string'),
        ('command', 'ActuatorCommand'),
        ('contract_id', 'string'),
        ('schema_version', 'uint32'),
    ),
    'ActuatorCommand': (
        ('kind', 'uint8'),
        ('velocity', 'geometry_msgs/Twist'),
    ),
    'AxisAssessment': (
        ('level', 'uint8'),
        ('max_std', 'float64'),
        ('reason', 'string'),
    ),
    'BeliefSelfAssessment': (
        ('header', 'std_msgs/Header'),
        ('overall_level', 'uint8'),
        ('position', 'AxisAssessment'),
        ('velocity', 'AxisAssessment'),
        ('orientation', 'AxisAssessment'),
        ('thresholds_sha256', 'string'),
        ('assessor_id', 'string'),
        ('schema_version', 'uint32'),
    ),
    'CalibratedSelfAssessment': (
        ('header', 'std_msgs/Header'),
        ('raw_assessment', 'BeliefSelfAssessment'),
        ('raw_assessment_sha256', 'string'),
        ('calibration_history', 'CalibrationHistory'),
        ('adjusted_overall_level', 'uint8'),
        ('adjustment_policy_id', 'string'),
        ('adjustment_reason', 'string'),
        ('min_outcomes', 'uint32'),
        ('downgrade_threshold', 'uint32'),
        ('schema_version', 'uint32'),
    ),
    'CalibrationHistory': (
        ('outcomes_considered', 'uint32'),
        ('count_within_1_std', 'uint32'),
        ('count_beyond_1_std', 'uint32'),
        ('count_beyond_3_std', 'uint32'),
        ('count_beyond_5_std', 'uint32'),
        ('worst_position_mahalanobis', 'float64'),
        ('worst_orientation_mahalanobis', 'float64'),
        ('has_observed_stamp', 'bool'),
        ('most_recent_observed_stamp', 'builtin_interfaces/Time'),
        ('window_size', 'uint32'),
        ('schema_version', 'uint32'),
    ),
    'ConfigurationChange': (
        ('header', 'std_msgs/Header'),
        ('node', 'string'),
        ('in_force_after_stamp_ns', 'int64'),
        ('configuration', 'string'),
    ),
    'Decision': (
        ('kind', 'uint8'),
        ('decision_stamp', 'builtin_interfaces/Time'),
        ('reason', 'string'),
    ),
    'DecisionRationale': (
        ('header', 'std_msgs/Header'),
        ('decision', 'Decision'),
        ('self_assessment_sha256', 'string'),
        ('calibrated_assessment_sha256', 'string'),
        ('policy_id', 'string'),
        ('flight_status', 'uint8'),
        ('mission_status', 'uint8'),
        ('perception_mode', 'string'),
        ('schema_version', 'uint32'),
    ),
    'ForwardPrediction': (
        ('header', 'std_msgs/Header'),
        ('target_stamp', 'builtin_interfaces/Time'),
        ('predicted_position', 'geometry_msgs/Point'),
        ('position_covariance', 'float64[9]'),
        ('model_id', 'string'),
        ('origin_position', 'geometry_msgs/Point'),
        ('velocity', 'geometry_msgs/Vector3'),
        ('origin_position_covariance', 'float64[9]'),
        ('velocity_covariance', 'float64[9]'),
        ('process_noise', 'float64'),
        ('schema_version', 'uint32'),
    ),
    'GateEmission': (
        ('header', 'std_msgs/Header'),
        ('action', 'uint8'),
        ('reason', 'string'),
        ('mode', 'string'),
        ('output_topic', 'string'),
        ('has_actuation', 'bool'),
        ('actuation_stamp', 'builtin_interfaces/Time'),
        ('rationale_sha256', 'string'),
        ('decision_kind', 'uint8'),
        ('command_kind', 'uint8'),
        ('actuation_received', 'builtin_interfaces/Time'),
        ('timeout_s', 'float64'),
        ('position', 'float32[3]'),
        ('velocity', 'float32[3]'),
        ('yaw', 'float32'),
        ('twist', 'geometry_msgs/Twist'),
        ('vehicle_command', 'uint32'),
        ('schema_version', 'uint32'),
    ),
    'PredictionOutcome': (
        ('header', 'std_msgs/Header'),
        ('prediction_stamp', 'builtin_interfaces/Time'),
        ('observed', 'bool'),
        ('status', 'string'),
        ('predicted_position', 'geometry_msgs/Point'),
        ('observed_position', 'geometry_msgs/Point'),
        ('position_mahalanobis', 'float64'),
        ('orientation_mahalanobis', 'float64'),
        ('observation_stamp', 'builtin_interfaces/Time'),
        ('position_axes_compared', 'uint8'),
        ('position_normalised_distance', 'float64'),
        ('schema_version', 'uint32'),
    ),
    'SourceSamples': (
        ('header', 'std_msgs/Header'),
        ('output_topic', 'string'),
        ('source_topics', 'string[]'),
        ('stamp_fields', 'string[]'),
        ('stamps', 'uint64[]'),
        ('schema_version', 'uint32'),
    ),
    'VehicleStatus': (
        ('header', 'std_msgs/Header'),
        ('flight_status', 'uint8'),
        ('mission_status', 'uint8'),
        ('perception_mode', 'string'),
        ('source', 'string'),
        ('schema_version', 'uint32'),
    ),
    # Other packages' types, as ROS 2 Jazzy defines them.
    'builtin_interfaces/Time': (('sec', 'int32'), ('nanosec', 'uint32')),
    'std_msgs/Header': (('stamp', 'builtin_interfaces/Time'), ('frame_id', 'string')),
    'geometry_msgs/Point': (('x', 'float64'), ('y', 'float64'), ('z', 'float64')),
    'geometry_msgs/Vector3': (('x', 'float64'), ('y', 'float64'), ('z', 'float64')),
    'geometry_msgs/Twist': (
        ('linear', 'geometry_msgs/Vector3'),
        ('angular', 'geometry_msgs/Vector3'),
    ),
})
