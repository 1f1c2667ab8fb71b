"""Importing the judges package must not import an SDK (fast start, no hard dependency)."""

from __future__ import annotations

import subprocess
import sys

import pytest

from tests._timing import scaled

CODE = """
import sys
import rubric_studio.judges as judges
from rubric_studio.judges import build_requests, interpret, judge_request, make_judge, resolve_judge, cost_usd
loaded = sorted(m for m in sys.modules if m.split('.')[0] in ('openai', 'anthropic', 'httpx', 'httpx2', 'textual'))
print(','.join(loaded))
"""

FIRST_REQUEST = """
import asyncio, sys
from rubric_studio.judges import JudgeConfig, JudgeError, JudgeRequest, make_judge


def print_sdks():
    print(sorted({name.split('.')[0] for name in sys.modules} & {'openai', 'anthropic'}))

judge = make_judge(JudgeConfig(provider=sys.argv[1], model='m', api_key='k', base_url='http://127.0.0.1:9/v1',
                               timeout=1, max_retries=0))
request = JudgeRequest('s', ('a',), 'sys', 'user', {'type': 'object'})
judge.body(request)
asyncio.run(judge.aclose())  # a judge that never sent has no client to close
print_sdks()

async def send():
    try:
        await judge.complete(request)
    except JudgeError:
        pass  # nothing listens on port 9: the request was sent, and refused
    await judge.aclose()

asyncio.run(send())
print_sdks()
"""


def test_import_does_not_load_sdks():
    result = subprocess.run([sys.executable, "-c", CODE], capture_output=True, text=True, timeout=scaled(60), check=True)
    assert result.stdout.strip() == "", f"imported at package import: {result.stdout.strip()}"


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_the_sdk_is_imported_on_the_first_request_only(provider: str):
    """Making a judge, building a body and closing it import no SDK; sending imports only its own."""
    result = subprocess.run([sys.executable, "-c", FIRST_REQUEST, provider], capture_output=True, text=True,
                            timeout=scaled(60))  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == ["[]", f"[{provider!r}]"]
