"""Importing the judges package must not import an SDK (fast start, no hard dependency)."""

from __future__ import annotations

import subprocess
import sys

CODE = """
import sys
import rubric_studio.judges as judges
from rubric_studio.judges import build_requests, interpret, judge_request, make_judge, resolve_judge, cost_usd
loaded = sorted(m for m in sys.modules if m.split('.')[0] in ('openai', 'anthropic', 'httpx', 'httpx2', 'textual'))
print(','.join(loaded))
"""


def test_import_does_not_load_sdks():
    result = subprocess.run([sys.executable, "-c", CODE], capture_output=True, text=True, timeout=60, check=True)
    assert result.stdout.strip() == "", f"imported at package import: {result.stdout.strip()}"


def test_make_judge_loads_only_the_sdk_it_needs():
    code = (
        "import sys\nfrom rubric_studio.judges import JudgeConfig, make_judge\n"
        "make_judge(JudgeConfig(provider='openai', model='m', api_key='k'))\n"
        "print('openai' in sys.modules, 'anthropic' in sys.modules)"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True)
    assert result.stdout.split() == ["True", "False"]
