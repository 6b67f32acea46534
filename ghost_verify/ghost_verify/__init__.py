"""ghost_verify: re-check BAUD-v1, ERUR-v1 and the SHA-256 chain from a rosbag2 MCAP bag alone."""

from ghost_bag.errors import BagFormatError, BagNotFoundError
from ghost_core.properties import (
    BAUD_V1,
    BAUD_VERSION,
    ERUR_V1,
    ERUR_VERSION,
    judge_baud,
    judge_erur,
    Violation,
    ViolationKind,
)

from .bag import DEFAULT_CYCLE_WINDOW, GhostBag, resolve_bag
from .completeness import CompletenessChecker, CompletenessReport, IncompleteCycle
from .conformance import (
    CONFORMANCE_VERSION,
    ConformanceChecker,
    ConformanceReport,
    verify_conformance,
)
from .cycle_properties import (
    PropertyChecker,
    PropertyReport,
    verify_baud,
    verify_erur,
    verify_property,
)
from .errors import LateMessageError, NoGhostTopicsError, SchemaMismatchError
from .events import BagInfo, CycleEvent, GhostMessage, ReadError, ReadErrorKind
from .history import (
    HISTORY_OUTCOME_LIMIT,
    HistoryChecker,
    HistoryMismatch,
    HistoryReport,
    InvalidOutcome,
)
from .report_json import canonical_report_json
from .single_pass import VerificationResult
from .trace import (
    ChainLink,
    ChainStatus,
    DecisionTracer,
    DecisionTraceRecord,
    DecisionTraceReport,
    LinkRecord,
    trace_decisions,
)
from .verify import verify_all

__all__ = [
    'BAUD_VERSION',
    'CONFORMANCE_VERSION',
    'DEFAULT_CYCLE_WINDOW',
    'ERUR_VERSION',
    'HISTORY_OUTCOME_LIMIT',
    'BagFormatError',
    'BagInfo',
    'BagNotFoundError',
    'BAUD_V1',
    'ChainLink',
    'ChainStatus',
    'CompletenessChecker',
    'CompletenessReport',
    'ConformanceChecker',
    'ConformanceReport',
    'CycleEvent',
    'DecisionTraceRecord',
    'DecisionTraceReport',
    'DecisionTracer',
    'ERUR_V1',
    'GhostBag',
    'GhostMessage',
    'HistoryChecker',
    'HistoryMismatch',
    'HistoryReport',
    'IncompleteCycle',
    'InvalidOutcome',
    'LateMessageError',
    'LinkRecord',
    'NoGhostTopicsError',
    'PropertyChecker',
    'PropertyReport',
    'ReadError',
    'ReadErrorKind',
    'SchemaMismatchError',
    'VerificationResult',
    'Violation',
    'ViolationKind',
    'canonical_report_json',
    'judge_baud',
    'judge_erur',
    'resolve_bag',
    'trace_decisions',
    'verify_all',
    'verify_baud',
    'verify_conformance',
    'verify_erur',
    'verify_property',
]
