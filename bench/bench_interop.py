"""How import handles real public eval files, per format: imported cleanly, with warnings,
refused (a clear message), or crashed (a bug); and which criterion fields a round trip
(import → export → import) keeps.

The corpus is not part of this repository. Gather it from the tools' public repositories:

    git -C <agentv clone> archive HEAD examples | tar -x -C CORPUS/agentv       # EntityProcess/agentv
    git -C <letta-evals clone> archive HEAD examples letta-leaderboard | tar -x -C CORPUS/letta

then run ``python bench/bench_interop.py --corpus CORPUS [--json]``. Each sub-folder is read
with its format (``agentv``: ``*.eval.yaml`` and ``suite.yaml`` files with tests/assertions;
``letta``: YAML with ``graders:``; ``promptfoo``: ``*promptfooconfig*.yaml``).
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from rubric_studio.core.problems import RubricError  # noqa: E402
from rubric_studio.interop import export_rubric, import_rubric  # noqa: E402

FIELDS = ("outcome", "weight", "required", "min_score", "score_ranges", "operator", "check")


def candidates(fmt: str, folder: Path) -> list[Path]:
    """The files in ``folder`` that a user of ``fmt`` would hand to import."""
    found = []
    for path in sorted(folder.rglob("*.y*ml")):
        text = path.read_text(errors="replace")
        if fmt == "agentv" and (path.name.endswith(".eval.yaml") or re.search(r"^tests:", text, re.M)) \
                and re.search(r"assert", text) or fmt == "letta" and re.search(r"^graders:", text, re.M) or fmt == "promptfoo" and "promptfooconfig" in path.name:
            found.append(path)
    return found


def measure(fmt: str, files: list[Path], corpus: Path) -> dict:
    counts = Counter()
    kept = Counter()
    criteria = 0
    warnings = Counter()
    refusals: list[str] = []
    for path in files:
        try:
            result = import_rubric(path, fmt)
        except RubricError as exc:
            counts["refused"] += 1
            refusals.append(f"{path.relative_to(corpus)}: {exc.problems[0].message[:200]}")
            continue
        except Exception as exc:  # a crash is a bug to report, not a refusal
            counts["crashed"] += 1
            refusals.append(f"{path.relative_to(corpus)}: CRASH {type(exc).__name__}: {exc}")
            continue
        counts["with warnings" if result.warnings else "clean"] += 1
        for warning in result.warnings:
            warnings[re.sub(r"\S+:\d+:\d+: |'[^']*'|\d+(\.\d+)?", "_", warning)[:110]] += 1
        back = import_rubric(export_rubric(result.rubric, fmt).text, fmt).rubric
        after = {c.key: c for c in back.criteria}
        for criterion in result.rubric.criteria:
            criteria += 1
            twin = after.get(criterion.key)
            for name in FIELDS:
                if twin is not None and getattr(twin, name) == getattr(criterion, name):
                    kept[name] += 1
    return {"files": len(files), **counts, "criteria": criteria,
            "kept": {name: round(100 * kept[name] / criteria, 1) if criteria else None for name in FIELDS},
            "top_warnings": warnings.most_common(5), "refusals": refusals}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--corpus", type=Path, default=Path("/work/peers/public"))
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    report = {fmt: measure(fmt, candidates(fmt, args.corpus / fmt), args.corpus)
              for fmt in ("agentv", "promptfoo", "letta") if (args.corpus / fmt).is_dir()}
    if args.json:
        print(json.dumps(report, indent=2))
        return 0
    print("| format | files | imported clean | with warnings | refused | crashed | fields kept on a round trip |")
    print("|---|---|---|---|---|---|---|")
    for fmt, r in report.items():
        kept = ", ".join(f"{k} {v}%" for k, v in r["kept"].items() if v is not None and v < 100) or "all 100%"
        print(f"| {fmt} | {r['files']} | {r.get('clean', 0)} | {r.get('with warnings', 0)} | {r.get('refused', 0)} "
              f"| {r.get('crashed', 0)} | {kept} |")
    for fmt, r in report.items():
        print(f"\n{fmt}: most frequent warnings")
        for text, n in r["top_warnings"]:
            print(f"  {n:3d}  {text}")
        for line in r["refusals"][:8]:
            print(f"  refused  {line}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
