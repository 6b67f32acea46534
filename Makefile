# Ghost: the two commands of the README, and a few helpers. Every target sets itself up first
# (scripts/bootstrap.sh is idempotent: with nothing changed it takes seconds).
SHELL := /bin/bash
SCENARIO ?= drift_then_recovery
ARGS ?=
# Where the shared data and vendored sources are (the real logs, the ros2 CLI, px4_msgs).
SHARED ?= ../shared

.PHONY: demo demo-px4 demo-ardupilot ros2 stress test test-fast bootstrap lint typecheck bench clean

## The main job: set up if needed, run the closed loop as separate processes, record, verify.
demo: bootstrap
	@source scripts/env.sh && ghost_run --scenario $(SCENARIO) $(ARGS)

## Real PX4 flight logs (../shared/realdata/*.ulg, or PX4_LOGS=...) played as PX4 would, through
## px4_bridge, the agent and the command gate; recorded and verified (scripts/demo_px4.sh).
demo-px4: bootstrap
	@bash scripts/demo_px4.sh

## Real ArduPilot flight logs (../shared/realdata/ardupilot/*.bin, or AP_LOGS=...) played as
## AP_DDS would, through ap_bridge, the agent and the command gate in ardupilot mode; recorded
## and verified (scripts/demo_ardupilot.sh).
demo-ardupilot: bootstrap
	@bash scripts/demo_ardupilot.sh

## The ros2 CLI (launch, run, pkg, topic) on a machine without ROS: Jazzy's own sources in
## $(SHARED)/vendor/ros2-jazzy, built once into build/vendored (scripts/vendored.sh; measured
## here: 42 s of CPU, 273 s on the 2 shared cores), then `source scripts/env.sh --ros2` in
## each shell. Without them, one line says so (exit 2).
ros2: bootstrap
	$(if $(wildcard $(SHARED)/vendor/ros2-jazzy/README.md),,$(error make ros2: no \
	$(SHARED)/vendor/ros2-jazzy beside this clone, so no ros2 CLI: use a ROS 2 Jazzy install \
	(README, On a ROS 2 Jazzy install)))
	@bash scripts/vendored.sh ros2-jazzy $(SHARED)/vendor/ros2-jazzy > /dev/null
	@echo 'ros2: ready; in each shell: source scripts/env.sh --ros2'

## Not in CI: every start-up and shutdown order (ghost/test/startup_orders.py) 10 times, and
## each PX4 log of $(SHARED)/realdata 10 times through ghost_run --px4-ulog, with one CPU
## burner per core; prints how many verified (scripts/stress.py; ARGS='--runs 2' for fewer).
stress: ros2
	@source scripts/env.sh --ros2 && install=$$(bash scripts/vendored.sh px4_msgs \
		$(SHARED)/vendor/px4_msgs) && set +u && COLCON_CURRENT_PREFIX=$$install \
		source "$$install/local_setup.bash" && python scripts/stress.py $(ARGS)

## The whole test suite: lint, strict typing, then every package's tests (unit, bag, real DDS).
test: bootstrap
	@bash scripts/test.sh $(ARGS)

## The inner loop: the unit and bag tiers only (no ROS 2 process) but their slow tests
## (conftest.SLOW_TESTS, marker slow: make test runs them), two workers, no lint. Measured here
## (2026-12-04, 2 cores, load about 2): 1368 tests, 88 s wall with the set-up check, 153 s of
## CPU.
test-fast: bootstrap
	@source scripts/env.sh && GHOST_TEST_TIER=fast python -m pytest -q -n 2 \
		-m '(unit or bag) and not slow' $(ARGS)

bootstrap:
	@bash scripts/bootstrap.sh

lint: bootstrap
	@source scripts/env.sh && ruff check .

typecheck: bootstrap
	@source scripts/env.sh && mypy --strict ghost_core/ghost_core && mypy --strict ghost_bag/ghost_bag && mypy --strict ghost_verify/ghost_verify \
		&& mypy --strict ghost_nodes/ghost_nodes && mypy --strict ghost_px4/ghost_px4 \
		&& mypy --strict ghost_ardupilot/ghost_ardupilot && mypy --strict ghost_mavros/ghost_mavros \
		&& mypy --strict ghost/ghost && mypy --strict ghost_review/ghost_review

bench: bootstrap
	@source scripts/env.sh && python bench/run_all.py $(ARGS)

clean:
	rm -rf build install log
