"""Calibration tests import ``tests.fakellm`` and ``tests.calibration.calib_helpers``: make ``tests`` importable."""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:  # however pytest was started
    sys.path.insert(0, str(ROOT))
