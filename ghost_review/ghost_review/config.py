"""Which configuration a Ghost bag was judged with, and only when the bag confirms it.

Candidates, in order: the bag's manifest.json ``config`` (what ghost_run recorded), else the
configuration the review replayed with or was given (``--params-file``). A candidate is used
only when its thresholds' content address equals the ``thresholds_sha256`` the bag's raw
assessments record; otherwise the report says the thresholds are not known rather than
guessing. The accuracy profile is the one the thresholds record by name. M, K and W are
always read from the recorded messages.
"""

from __future__ import annotations

from dataclasses import dataclass
import os
from pathlib import Path

from ghost_core.errors import ConfigError
from ghost_core.pipeline import PipelineConfig
from ghost_verify.run_parameters import load_run_config, parse_run_config

__all__ = ['ReviewConfig', 'resolve_config']

@dataclass(frozen=True, slots=True)
class ReviewConfig:
    """The configuration a report shows: None when the bag does not confirm one."""

    pipeline: PipelineConfig | None
    #: Where it came from, or why there is none (one short phrase).
    source: str

    @property
    def profile(self) -> str:
        """The accuracy profile the thresholds record by name ('none': given directly)."""
        if self.pipeline is None:
            return 'unknown'
        return self.pipeline.thresholds.accuracy_profile or 'none'


def _manifest_config(bag: Path) -> PipelineConfig | None:
    """The start configuration the bag's manifest.json records (ghost_verify reads it)."""
    document, _missing = load_run_config(bag)
    if document is None:
        return None
    try:
        return parse_run_config(document)[0]
    except ConfigError:
        return None


def resolve_config(bag: str | os.PathLike[str], thresholds_sha256: str | None,
                   given: PipelineConfig | None, given_source: str) -> ReviewConfig:
    """The configuration of `bag` (see the module docstring)."""
    candidates = []
    recorded = _manifest_config(Path(bag))
    if recorded is not None:
        candidates.append((recorded, 'manifest.json'))
    if given is not None:
        candidates.append((given, given_source))
    if thresholds_sha256 is None:
        return ReviewConfig(None, 'no raw assessment recorded')
    for config, source in candidates:
        if config.thresholds.sha256 == thresholds_sha256:
            return ReviewConfig(config, source)
    if candidates:
        return ReviewConfig(None, f'thresholds_sha256 {thresholds_sha256[:12]}… matches '
                                  f'neither {" nor ".join(source for _, source in candidates)}')
    return ReviewConfig(None, f'not recorded (no manifest.json; thresholds_sha256 '
                              f'{thresholds_sha256[:12]}…)')
