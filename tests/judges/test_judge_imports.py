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


def test_the_sdk_is_imported_on_the_first_request_only():
    """Making a judge and building its request body import no SDK; sending imports only its own."""
    code = (
        "import sys, asyncio\n"
        "from rubric_studio.judges import JudgeConfig, JudgeError, JudgeRequest, make_judge\n"
        "judge = make_judge(JudgeConfig(provider='openai', model='m', api_key='k', base_url='http://127.0.0.1:9/v1',"
        " timeout=1, max_retries=0))\n"
        "request = JudgeRequest('s', ('a',), 'sys', 'user', {'type': 'object'})\n"
        "judge.body(request)\n"
        "print('openai' in sys.modules, 'anthropic' in sys.modules)\n"
        "async def send():\n"
        "    try:\n"
        "        await judge.complete(request)\n"
        "    except JudgeError:\n"
        "        pass\n"
        "    await judge.aclose()\n"
        "asyncio.run(send())\n"
        "print('openai' in sys.modules, 'anthropic' in sys.modules)"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True)
    assert result.stdout.split() == ["False", "False", "True", "False"]
