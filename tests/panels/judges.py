"""Three scripted judges with known biases, answering by model name on the fake server.

* ``judge-long`` rewards length: met when the output is long, whatever it says.
* ``judge-coin`` is random on the criterion: a coin seeded by the sample (same answer every time).
* ``judge-right`` is right: met when the output says the refund takes 5 days (the truth).

Samples ``sNN``: the truth is ``NN % 2 == 0`` and the length ``(NN // 2) % 2 == 0``, so length tells
nothing about the truth. A ``judge-down`` model answers HTTP 500 (a member that errors); ``judge-flaky``
answers HTTP 500 on every fourth ticket (``NN % 4 == 0``) and the truth on the others.
"""

from __future__ import annotations

import random
import re

from tests.fakellm import Call, server_error

LONG, COIN, RIGHT, DOWN, FLAKY = "judge-long", "judge-coin", "judge-right", "judge-down", "judge-flaky"
SEED = 7
RUBRIC = "name: refunds\njudge:\n  max_retries: 0\ncriteria:\n  - id: timeline\n    outcome: Says the refund takes 5 days\n"


def sample_text(number: int) -> str:
    claim = "your refund takes 5 days" if number % 2 == 0 else "your refund takes a while"
    padding = (
        " We are always happy to help with anything else you need." * 4 if (number // 2) % 2 == 0 else ""
    )
    return f"ticket {number:02d}: {claim}.{padding}"


def truth(number: int) -> bool:
    return number % 2 == 0


class Judges:
    """The fake server's brain: answers each model as the module docstring says, counting calls per model."""

    def __init__(self) -> None:
        self.calls: dict[str, int] = {}

    def __call__(self, call: Call):
        model = call.body["model"]
        self.calls[model] = self.calls.get(model, 0) + 1
        if model == DOWN or (model == FLAKY and ticket(call.sample) % 4 == 0):
            return server_error(500)
        met = decide(model, call.sample)
        quote = "5 days" if "5 days" in call.sample else ""
        return {
            "rationale": f"{model} says {'met' if met else 'unmet'}",
            "evidence": [quote] if quote else [],
            "verdict": "met" if met else "unmet",
        }


def decide(model: str, text: str) -> bool:
    """What ``model`` says about the criterion on an output ``text`` (its ticket number picks the coin)."""
    number = ticket(text)
    if model == LONG:
        return len(text) > 120
    if model == COIN:
        return random.Random(f"{SEED}-{number}").random() < 0.5
    return truth(number)


def ticket(text: str) -> int:
    """The ticket number a sample's output starts with."""
    return int(re.search(r"ticket (\d+)", text).group(1))


def member(model: str) -> str:
    return f"openai:{model}"
