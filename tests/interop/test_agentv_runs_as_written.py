"""AgentV exports run as written: the provider catalog AgentV 5 refuses to run without is written
beside the export (or printed, for stdout), in the shape AgentV's own loader reads.

AgentV 5 is not on npm, so :func:`agentv5_providers` reads the catalog as AgentV does
(EntityProcess/agentv: ``packages/core/src/evaluation/loaders/config-loader.ts`` ``loadConfig``
and ``providers/targets-file.ts``): the first ``.agentv/config.yaml`` from the eval's folder up;
its ``providers`` either a list or ``file://<path>`` relative to the config file, that file a bare
YAML list (or an object with a ``providers`` list); each entry an object with a non-empty ``id``,
named by its ``label`` (else its ``id``), names unique. With no catalog the CLI stops with
"No provider catalog configured" (``apps/cli/src/commands/eval/targets.ts``), and a ``--provider``
label or grader label is looked up in the catalog alone. An AgentV 4 export keeps its judge outside
the eval; import reads it back or says it could not."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import yaml

from rubric_studio.cli import main
from rubric_studio.interop.agentv import CATALOG_FILE, CONFIG_FILE, SAMPLES_TARGET

RUBRIC = """\
name: reply
pass_threshold: 0.6
judge:
  model: openai:gpt-4o-mini
criteria:
  - id: refund-window
    outcome: States the 30-day refund window
    required: true
  - id: polite
    check: {type: keywords, required: [thanks]}
"""

PANEL = """\
name: reply
judge:
  panel:
    - model: openai:gpt-4o-mini
    - model: anthropic:claude-haiku-4-5
criteria:
  - id: refund-window
    outcome: States the 30-day refund window
"""

SAMPLES = [{"id": "on-time", "input": "Refund?", "output": "Thanks: refunds are open for 30 days."},
           {"id": "curt", "output": "No."}]


class NoCatalog(Exception):
    """AgentV 5's "No provider catalog configured"."""


def agentv5_providers(eval_file: Path, root: Path) -> dict[str, dict]:
    """The provider catalog AgentV 5 loads for ``eval_file`` (searching up to ``root``), by name."""
    folder = eval_file.parent
    while True:
        config_path = folder / ".agentv" / "config.yaml"
        if config_path.is_file():
            break
        if folder == root or folder.parent == folder:
            raise NoCatalog
        folder = folder.parent
    config = yaml.safe_load(config_path.read_text())
    raw = config.get("providers") if isinstance(config, dict) else None
    if isinstance(raw, str) and raw.startswith("file://"):
        target = Path(raw[len("file://"):])
        raw = yaml.safe_load((target if target.is_absolute() else config_path.parent / target).read_text())
        if isinstance(raw, dict):
            raw = raw["providers"]
    if not isinstance(raw, list):
        raise NoCatalog
    by_name: dict[str, dict] = {}
    for entry in raw:
        assert isinstance(entry, dict) and isinstance(entry.get("id"), str) and entry["id"].strip()
        name = (entry.get("label") or entry["id"]).strip()
        assert name not in by_name, f"duplicate provider identity {name!r}"
        by_name[name] = entry
    return by_name


def _env_references(entries) -> set[str]:
    """The variables the entries read with no fallback (what must be set to run)."""
    text = json.dumps(list(entries))
    return set(re.findall(r"\{\{\s*env\.([A-Za-z_]\w*)\s*\}\}", text))


def _labels_used(data: dict) -> set[str]:
    """Every provider label the eval selects: the grader, each assertion's provider."""
    used = {data.get("default_test", {}).get("options", {}).get("provider")}
    stack = list(data.get("assert", []))
    while stack:
        entry = stack.pop()
        if isinstance(entry, dict):
            used.add(entry.get("provider"))
            stack += [v for v in entry.values() if isinstance(v, list)]
            stack += [v for value in entry.values() if isinstance(value, list) for v in value]
    return {label for label in used if label}


def _export(folder: Path, rubric: str, capsys, *extra: str) -> Path:
    (folder / "reply.yaml").write_text(rubric)
    (folder / "reply.samples.jsonl").write_text("".join(json.dumps(s) + "\n" for s in SAMPLES))
    (folder / "evals").mkdir()
    out = folder / "evals" / "reply.eval.yaml"
    assert main(["export", str(folder / "reply.yaml"), "--to", "agentv", "-o", str(out), *extra]) == 0
    return out


def test_the_export_writes_the_catalog_agentv5_loads_and_every_label_it_runs_is_in_it(tmp_path, capsys):
    out = _export(tmp_path, RUBRIC, capsys)
    err = capsys.readouterr().err
    assert f"wrote {out.parent / CATALOG_FILE}" in err and f"wrote {out.parent / CONFIG_FILE}" in err
    data = yaml.safe_load(out.read_text())
    catalog = agentv5_providers(out, tmp_path)
    # the command the header gives runs: its --provider and the grader are in the catalog, as written
    assert f"--provider {SAMPLES_TARGET}" in out.read_text()
    assert {SAMPLES_TARGET, "rubric-judge"} <= set(catalog) and _labels_used(data) <= set(catalog)
    assert list(catalog.values()) == data["providers"]
    assert _env_references(catalog.values()) == {"OPENAI_API_KEY"}  # only the key to set
    assert "with only OPENAI_API_KEY set" in out.read_text()
    fixtures = catalog[SAMPLES_TARGET]["config"]["fixtures"]  # AgentV resolves it against the eval file
    assert (out.parent / fixtures).is_file()


def test_a_panel_export_catalogs_every_member(tmp_path, capsys):
    out = _export(tmp_path, PANEL, capsys)
    data = yaml.safe_load(out.read_text())
    catalog = agentv5_providers(out, tmp_path)
    members = {label for label in _labels_used(data)}
    assert len(members) == 2 and members <= set(catalog)
    assert _env_references(catalog.values()) == {"OPENAI_API_KEY", "ANTHROPIC_API_KEY"}


def test_without_the_catalog_agentv5_would_not_run(tmp_path, capsys):
    out = _export(tmp_path, RUBRIC, capsys)
    (out.parent / CONFIG_FILE).unlink()
    with pytest.raises(NoCatalog):
        agentv5_providers(out, tmp_path)


def test_exporting_again_replaces_the_catalog_but_not_the_users_own_project_files(tmp_path, capsys):
    out = _export(tmp_path, RUBRIC, capsys)
    catalog = out.parent / CATALOG_FILE
    catalog.write_text(catalog.read_text().replace("gpt-4o-mini", "gpt-old"))
    assert main(["export", str(tmp_path / "reply.yaml"), "--to", "agentv", "-o", str(out)]) == 0
    assert "gpt-old" not in catalog.read_text()
    config = out.parent / CONFIG_FILE
    config.write_text("eval_patterns: ['**/*.eval.yaml']\n")
    catalog.write_text("- id: openai\n  label: mine\n")
    capsys.readouterr()
    assert main(["export", str(tmp_path / "reply.yaml"), "--to", "agentv", "-o", str(out)]) == 0
    err = capsys.readouterr().err
    assert config.read_text() == "eval_patterns: ['**/*.eval.yaml']\n"
    assert catalog.read_text() == "- id: openai\n  label: mine\n"
    assert f"{config} exists and was left as it is" in err and "providers: file://providers.yaml" in err
    assert f"{catalog} exists and was left as it is" in err and "label: rubric-judge" in err


def test_an_export_to_stdout_prints_the_catalog_and_where_it_goes(tmp_path, capsys):
    (tmp_path / "reply.yaml").write_text(RUBRIC)
    assert main(["export", str(tmp_path / "reply.yaml"), "--to", "agentv"]) == 0
    captured = capsys.readouterr()
    assert f"write {CONFIG_FILE} as\nproviders: file://providers.yaml\nand {CATALOG_FILE} as\n" in captured.err
    printed = captured.err.split(f"and {CATALOG_FILE} as\n", 1)[1].rsplit("(or export", 1)[0]
    assert yaml.safe_load(printed) == yaml.safe_load(captured.out)["providers"]
    assert not (tmp_path / ".agentv").exists()


def test_agentv4_exports_and_checks_only_exports_write_no_catalog(tmp_path, capsys):
    (tmp_path / "reply.yaml").write_text(RUBRIC)
    out = tmp_path / "reply.eval.yaml"
    assert main(["export", str(tmp_path / "reply.yaml"), "--to", "agentv", "--agentv-version", "4",
                 "-o", str(out)]) == 0
    assert not (tmp_path / ".agentv").exists()
    (tmp_path / "checks.yaml").write_text("name: c\ncriteria:\n  - id: p\n    check: {type: keywords, required: [x]}\n")
    assert main(["export", str(tmp_path / "checks.yaml"), "--to", "agentv", "-o", str(out)]) == 0
    assert not (tmp_path / ".agentv").exists()


# -- AgentV 4: the judge lives outside the eval; import finds it or says so ------------------------
COMPATIBLE = RUBRIC.replace("model: openai:gpt-4o-mini", "model: openai-compatible:qwen2.5\n  base_url: http://127.0.0.1:8080/v1")


@pytest.mark.parametrize("rubric, judge", [
    (RUBRIC, {"model": "openai:gpt-4o-mini"}),
    (COMPATIBLE, {"model": "openai-compatible:qwen2.5", "base_url": "http://127.0.0.1:8080/v1"}),
])
@pytest.mark.parametrize("samples", [True, False])
def test_an_agentv4_export_imports_back_with_its_judge(tmp_path, capsys, rubric, judge, samples):
    from rubric_studio.interop import import_rubric

    out = _export(tmp_path, rubric, capsys, "--agentv-version", "4", *([] if samples else ["--no-samples"]))
    result = import_rubric(out)
    assert result.rubric.judge.model_dump(exclude_unset=True) == judge
    assert not [w for w in result.warnings if "judge" in w]


def test_an_agentv4_eval_reads_its_judge_from_the_targets_and_env_beside_it(tmp_path):
    from rubric_studio.interop import import_rubric

    (tmp_path / "suite.eval.yaml").write_text(
        "name: s\nexecution: {target: bot}\nassertions:\n  - type: rubrics\n    criteria: [Is polite]\n"
        "tests:\n  - {id: a, input: hi, criteria: polite}\n")
    (tmp_path / ".agentv").mkdir()
    (tmp_path / ".agentv" / "targets.yaml").write_text(
        "targets:\n  - {name: bot, provider: openai, model: gpt-4o, grader_target: grader}\n"
        "  - name: grader\n    provider: anthropic\n    model: ${{ GRADER_MODEL }}\n    api_key: ${{ ANTHROPIC_API_KEY }}\n")
    (tmp_path / ".env").write_text("GRADER_MODEL=claude-haiku-4-5\n")
    result = import_rubric(tmp_path / "suite.eval.yaml")
    assert result.rubric.judge.model == "anthropic:claude-haiku-4-5"
    (tmp_path / ".env").unlink()
    result = import_rubric(tmp_path / "suite.eval.yaml")
    assert result.rubric.judge is None or result.rubric.judge.model is None
    assert any("grader target 'grader'" in w and "model from GRADER_MODEL" in w for w in result.warnings)


def test_an_agentv4_eval_whose_judge_cannot_be_found_says_so(tmp_path):
    from rubric_studio.interop import import_rubric

    (tmp_path / "suite.eval.yaml").write_text(
        "name: s\nassertions:\n  - type: rubrics\n    criteria: [Is polite]\ntests:\n  - {id: a, input: hi}\n")
    result = import_rubric(tmp_path / "suite.eval.yaml")
    assert result.rubric.judge is None or result.rubric.judge.model is None
    [warning] = [w for w in result.warnings if "judge was not imported" in w]
    assert ".agentv/targets.yaml" in warning and "set judge.model" in warning
