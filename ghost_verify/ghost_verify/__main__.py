"""``python -m ghost_verify BAG``: the combined check (same as verify_all), without ROS."""

import sys

from .cli import verify_all_main

sys.exit(verify_all_main())
