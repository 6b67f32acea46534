# Ghost: the two commands of the README, and a few helpers. Every target sets itself up first
# (scripts/bootstrap.sh is idempotent: with nothing changed it takes seconds).
SHELL := /bin/bash
SCENARIO ?= drift_then_recovery
ARGS ?=

.PHONY: demo demo-px4 test test-fast bootstrap lint typecheck bench clean

## The main job: set up if needed, run the closed loop as separate processes, record, verify.
demo: bootstrap
	@source scripts/env.sh && ghost_run --scenario $(SCENARIO) $(ARGS)

## Real PX4 flight logs (../shared/realdata/*.ulg, or PX4_LOGS=...) played as PX4 would, through
## px4_bridge, the agent and the command gate; recorded and verified (scripts/demo_px4.sh).
demo-px4: bootstrap
	@bash scripts/demo_px4.sh

## The whole test suite: lint, strict typing, then every package's tests (unit, bag, real DDS).
test: bootstrap
	@bash scripts/test.sh $(ARGS)

## The inner loop: the unit and bag tiers only (no ROS 2 process), two workers, under 90 s;
## no lint.
test-fast: bootstrap
	@source scripts/env.sh && GHOST_TEST_TIER=fast python -m pytest -q -n 2 -m 'unit or bag' $(ARGS)

bootstrap:
	@bash scripts/bootstrap.sh

lint: bootstrap
	@source scripts/env.sh && ruff check .

typecheck: bootstrap
	@source scripts/env.sh && mypy --strict ghost_core/ghost_core && mypy --strict ghost_bag/ghost_bag && mypy --strict ghost_verify/ghost_verify \
		&& mypy --strict ghost_nodes/ghost_nodes && mypy --strict ghost_px4/ghost_px4 \
		&& mypy --strict ghost_ardupilot/ghost_ardupilot \
		&& mypy --strict ghost/ghost && mypy --strict ghost_review/ghost_review

bench: bootstrap
	@source scripts/env.sh && python bench/run_all.py $(ARGS)

clean:
	rm -rf build install log
