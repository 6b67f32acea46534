"""Every check in one pass: manifest, BAUD-v1, ERUR-v1, chain, completeness, conformance, GATE."""

from __future__ import annotations

import os

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

from ghost_bag.manifest import MANIFEST_NAME

from .bag import DEFAULT_CYCLE_WINDOW
from .manifest import check_manifest, ManifestCheck
from .run_parameters import load_run_parameters, RunParameters
from .single_pass import VerificationResult, verify_single_pass

__all__ = ['verify_all']


def verify_all(
    bag: str | os.PathLike[str],
    *,
    min_outcomes: int | None = None,
    downgrade_threshold: int | None = None,
    window_size: int | None = None,
    cycle_window: int = DEFAULT_CYCLE_WINDOW,
    public_key: Ed25519PublicKey | None = None,
    manifest: ManifestCheck | None = None,
    strict: bool = False,
    replay: bool = True,
) -> VerificationResult:
    """Read the bag once and return every report together.

    The signed manifest is checked first, with `public_key` (without one, the result only
    says whether the bag has a manifest); a caller that already checked it passes the
    `manifest` check instead.

    Every cycle is judged with the M, K and W of the run's recorded configuration in force at
    its stamp (manifest.json and the recorded changes, ``run_parameters``), and a message that
    carries others is a ``parameters_mismatch``. Given values override them for the judging;
    a bag with no recorded configuration is judged with the given ones, else with those its
    messages claim (a warning says so). A damaged bag is judged on what could be read, and
    the result lists what could not (`read_errors`). Raises a ghost_bag.errors.BagError
    subclass when nothing ghost could be read, or the bag holds no ghost topics, or a ghost
    schema is not the one the verifier reads.

    Cycles cut by the recording (a bag stopped before their actuation) and histories whose
    evidence window starts before the bag are unverifiable: listed, not failures. `strict`
    makes those cycles fail (and, without a recorded configuration, judges every cycle with
    the first recorded M and K).

    `replay` (on by default; ``--no-replay`` turns it off) re-runs the agent, and a bridge's
    conversion (px4_, ap_, mavros_bridge) when the bag holds its inputs, from the bag's inputs
    with its recorded configuration and compares every recorded message with the re-derived one
    (``ghost_verify.rederive``; a second pass over the bag). A difference fails; a bag without
    inputs or configuration is reported not re-derivable, which fails only with `strict`.

    One bag is one pass in one process: parallelism is across bags (``ghost_verify.fleet``).
    """
    if manifest is None:
        manifest = check_manifest(bag, public_key)
    parameters = _run_parameters(bag, min_outcomes, downgrade_threshold, window_size)
    return verify_single_pass(bag, manifest, parameters, cycle_window=cycle_window,
                              strict=strict, replay=replay)


def _run_parameters(bag: str | os.PathLike[str], min_outcomes: int | None,
                    downgrade_threshold: int | None, window_size: int | None) -> RunParameters:
    """Return ``load_run_parameters``; a manifest.json nested too deeply cannot be used.

    That fails the parameters check; it is never an internal fault.
    """
    try:
        return load_run_parameters(bag, min_outcomes=min_outcomes,
                                   downgrade_threshold=downgrade_threshold,
                                   window_size=window_size)
    except RecursionError:  # json's, in run_parameters.load_run_config
        return RunParameters(None, min_outcomes, downgrade_threshold, window_size,
                             problem=f'{MANIFEST_NAME} cannot be read as JSON (nested too '
                                     'deeply)')
