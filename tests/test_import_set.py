"""What the studio's first screen and a fully cached ``grade`` import: named, so the set cannot grow back.

Each run is a fresh process, so ``sys.modules`` holds exactly what it imported. The first screen
is the first frame that shows the results table (what ``bench/bench_tui.py`` and
``bench/bench_first_second.py`` wait for); the studio imports the rest after it (the judge, the
file watcher, the editor and the Agreement panel) or when first used (the calibration dialogs,
fitting, improving, editing YAML with ruamel). A module new on either path fails here by name: import it
where it is first needed, or, if the first screen or the command really needs it, add it below.
How long the imports take is measured in ``bench/bench_first_second.py``, never asserted.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests._timing import scaled
from tests.fakellm import FakeLLM

ROOT = Path(__file__).resolve().parent.parent
pytestmark = pytest.mark.timeout(180)


def _modules(package: str, names: str = "") -> set[str]:
    """``package`` and its modules ``names``, with every package above them."""
    found = {package, *(f"{package}.{name}" for name in names.split())}
    return found | {package.rsplit(".", depth)[0] for depth in range(1, package.count(".") + 1)}


#: rubric_studio modules the first screen may import, by package.
FIRST_SCREEN = set().union(
    _modules("rubric_studio", "_lazy"),
    _modules("rubric_studio.core", "agreement atomic card discovery examples files folders human_agreement "
                                   "intervals loading numbers pass_rate problems results rubric safe_text scoring "
                                   "textstream userdir values"),
    _modules("rubric_studio.core.checks", "_builtin _checks _code _definition _eval _json_path _jsonschema "
                                          "_registry _spec"),
    _modules("rubric_studio.core.document", "_criteria _disk _document _fields _history _keys _layout _merge "
                                            "_nodes _roundtrip _schema _style"),
    _modules("rubric_studio.core.labels", "_annotators _journal _labels _live _overlay _wording"),
    _modules("rubric_studio.core.providers", "_builtin _registry _spec"),
    _modules("rubric_studio.core.samples", "_csv _samples"),
    _modules("rubric_studio.core.trust", "_effective _folders _policy _store _user"),
    _modules("rubric_studio.core.yamlpos", "_compose _fast _load _scalars"),
    _modules("rubric_studio.engine", "cache report starter usage"),
    _modules("rubric_studio.engine.versions", "_causes _diff _history _versions"),
    _modules("rubric_studio.session", "card labelling labels results_model studio trust versions"),
    _modules("rubric_studio.tui", "app card_actions closing dialogs files_flow footer grading key_order label_keys "
                                  "live_view messages outside_edits restyle save_flow statusbar trust_prompt"),
    _modules("rubric_studio.tui.calibration", "_annotators _flow _labeling"),
    _modules("rubric_studio.tui.editor", "_text_fields"),
    _modules("rubric_studio.tui.results", "_inspector _layout _matrix _pane _probe_view _text"),
)

#: rubric_studio modules a fully cached ``grade`` (table report) may import.
CACHED_GRADE = set().union(
    _modules("rubric_studio", "__main__ _lazy"),
    _modules("rubric_studio.cli", "_labels_in common grade output progress"),
    _modules("rubric_studio.cli.report", "_formats _pass_rate _run _table"),
    _modules("rubric_studio.core", "agreement atomic check_runner discovery examples files folders intervals "
                                   "loading numbers panel pass_rate problems results rubric safe_text scoring "
                                   "textstream userdir values"),
    _modules("rubric_studio.core.checks", "_builtin _checks _code _definition _eval _json_path _jsonschema "
                                          "_registry _spec"),
    _modules("rubric_studio.core.labels", "_annotators _journal _labels _overlay _wording"),
    _modules("rubric_studio.core.providers", "_builtin _registry _spec"),
    _modules("rubric_studio.core.samples", "_csv _samples"),
    _modules("rubric_studio.core.trust", "_effective _folders _policy _store _user"),
    _modules("rubric_studio.core.yamlpos", "_compose _fast _load _scalars"),
    _modules("rubric_studio.engine", "api cache dispatch events grader offloop plan report starter usage votes"),
    _modules("rubric_studio.judges", "base bodies breaker capabilities concurrency config evidence openai parsing "
                                     "pricing prompts provider_code providers replies retry run schemas sdk_errors "
                                     "sdk_judge userdir"),
)

#: Never on the first screen: what it does not show (each is imported when first used or after it).
NOT_ON_FIRST_SCREEN = {
    "rubric_studio.engine.grader",  # the judge: resolved once the first screen is drawn
    "rubric_studio.judges",
    "rubric_studio.engine.improve",  # improving a criterion
    "rubric_studio.engine.fit",  # fitting threshold and weights
    "rubric_studio.session.calibration",  # fit and consistency commands
    "rubric_studio.tui.calibration._agreement",  # the Agreement panel: mounted after the first screen
    "rubric_studio.tui.calibration._dialogs",
    "rubric_studio.tui.improve",
    "rubric_studio.tui.conflict",  # the save-conflict dialog
    "rubric_studio.tui.editor._editor",  # the editor: mounted after the first screen
    "rubric_studio.core.labels._store",  # editing the labels sidecar's YAML
}
#: Third-party packages neither path imports: the provider SDKs (nothing is sent), ruamel (no YAML is
#: edited), the file watcher (started after the first screen), the web labeller.
NEVER = {"openai", "anthropic", "httpx", "ruamel", "watchfiles", "starlette", "uvicorn"}

FIRST_SCREEN_SCRIPT = """
import json, sys
from textual.css.query import NoMatches
from rubric_studio.tui import app as studio

# The editor also mounts a moment after start at the latest; on a loaded machine that moment can
# come before the first screen, which is then not the one measured here.
studio.EDITOR_DELAY = 3600
app = studio.StudioApp(sys.argv[1])
seen = []

def first_screen():
    try:
        shown = app.query_one("#results-pane").display
    except NoMatches:
        shown = False
    if shown and not seen:
        seen.append(sorted(sys.modules))
        app.exit()

app.post_display_hook = first_screen
app.run(headless=True)
print(json.dumps(seen[0] if seen else None))
"""

GRADE_SCRIPT = """
import json, sys
from rubric_studio.cli import main
code = main(sys.argv[2:])
with open(sys.argv[1], "w") as handle:
    json.dump({"code": code, "modules": sorted(sys.modules)}, handle)
"""


def _env(folder: Path, **extra: str) -> dict[str, str]:
    env = {name: value for name, value in os.environ.items()
           if name not in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "OPENAI_BASE_URL", "ANTHROPIC_BASE_URL")}
    return {**env, "PYTHONPATH": str(ROOT), "RUBRIC_STUDIO_HOME": str(folder / "home"),
            "RUBRIC_STUDIO_CACHE": str(folder / "cache.sqlite"), **extra}


@pytest.fixture
def bundled(tmp_path: Path) -> Path:
    """The bundled support_reply rubric, samples and labels, copied."""
    shutil.copytree(ROOT / "sample_rubrics" / "support_reply", tmp_path / "support_reply")
    return tmp_path / "support_reply" / "support_reply.yaml"


def _grown(loaded: set[str], allowed: set[str]) -> list[str]:
    return sorted(name for name in loaded if name.startswith("rubric_studio") and name not in allowed)


def test_the_first_screen_imports_only_the_modules_named_here(bundled: Path):
    done = subprocess.run([sys.executable, "-c", FIRST_SCREEN_SCRIPT, str(bundled)], capture_output=True, text=True,
                          cwd=bundled.parent, env=_env(bundled.parent), timeout=scaled(90))
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr
    loaded = json.loads(done.stdout.strip().splitlines()[-1])
    assert loaded is not None, "the results table never showed"
    loaded = set(loaded)
    assert "rubric_studio.tui.results._matrix" in loaded  # the screen measured is the results table
    assert not _grown(loaded, FIRST_SCREEN), f"new on the first screen: {_grown(loaded, FIRST_SCREEN)}"
    assert not loaded & NOT_ON_FIRST_SCREEN
    assert not {name.split(".")[0] for name in loaded} & NEVER


def test_a_fully_cached_grade_imports_only_the_modules_named_here(bundled: Path, tmp_path: Path):
    env = _env(bundled.parent, OPENAI_API_KEY="k")
    with FakeLLM() as server:
        args = ["grade", str(bundled), "--base-url", server.base_url_openai]
        cold = subprocess.run([sys.executable, "-m", "rubric_studio", *args, "--format", "json"], capture_output=True,
                              text=True, cwd=bundled.parent, env=env, timeout=scaled(90))
        assert cold.returncode in (0, 1), cold.stderr
        calls = server.calls()
        assert calls > 0
        out = tmp_path / "modules.json"
        done = subprocess.run([sys.executable, "-c", GRADE_SCRIPT, str(out), *args], capture_output=True, text=True,
                              cwd=bundled.parent, env=env, timeout=scaled(90))
        assert server.calls() == calls  # every reply came from the cache
    assert "Traceback" not in done.stderr, done.stderr
    run = json.loads(out.read_text())
    loaded = set(run["modules"])
    assert run["code"] in (0, 1) and "support-reply" in done.stdout  # the table was printed
    assert not _grown(loaded, CACHED_GRADE), f"new in a cached grade: {_grown(loaded, CACHED_GRADE)}"
    assert "rubric_studio.core.plugins" not in loaded  # a built-in judge reads no provider plugin
    assert not {name.split(".")[0] for name in loaded} & (NEVER | {"textual"})


def test_the_lists_name_modules_that_exist():
    """A module renamed or removed is taken off the lists here, so they never allow a stale name."""
    import importlib.util

    for name in sorted(FIRST_SCREEN | CACHED_GRADE | NOT_ON_FIRST_SCREEN):
        if name != "rubric_studio.__main__":
            assert importlib.util.find_spec(name) is not None, name


def test_the_studio_loads_what_the_first_screen_left_once_it_is_drawn(bundled: Path):
    """The judge, the editor and the Agreement panel come right after the first screen: the same
    studio, left running until its first grade is shown and its editor is ready."""
    script = FIRST_SCREEN_SCRIPT.replace(
        "if shown and not seen:",
        "if shown and app.session.report is not None and getattr(app.editor, 'ready', False) and not seen:")
    done = subprocess.run([sys.executable, "-c", script, str(bundled)], capture_output=True, text=True,
                          cwd=bundled.parent, env=_env(bundled.parent), timeout=scaled(90))
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr
    loaded = set(json.loads(done.stdout.strip().splitlines()[-1]) or ())
    assert {"rubric_studio.engine.grader", "rubric_studio.tui.editor._editor",
            "rubric_studio.tui.calibration._agreement"} <= loaded
