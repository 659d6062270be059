"""The classifier version stored with cached verdicts covers every module of
the verdicts package, so a change to any rule refreshes cached verdicts."""

from __future__ import annotations

import shutil
import types
from pathlib import Path

from orbench_play import verdicts
from orbench_play.cache import store as cache_mod


def _version_of(root: Path, monkeypatch) -> str:
    fake = types.SimpleNamespace(__file__=str(root / "verdicts" / "__init__.py"))
    monkeypatch.setattr(cache_mod, "verdicts", fake)
    cache_mod.classifier_version.cache_clear()
    try:
        return cache_mod.classifier_version()
    finally:
        cache_mod.classifier_version.cache_clear()


def test_a_change_to_any_classifier_module_changes_the_version(tmp_path, monkeypatch):
    package = Path(verdicts.__file__).parent
    shutil.copytree(package, tmp_path / "verdicts", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copytree(package.parent / "assets", tmp_path / "assets")
    before = _version_of(tmp_path, monkeypatch)
    assert before == _version_of(tmp_path, monkeypatch)
    rules = tmp_path / "verdicts" / "rules.py"
    rules.write_text(rules.read_text(encoding="utf-8") + "\n# a new rule\n", encoding="utf-8")
    after_rules = _version_of(tmp_path, monkeypatch)
    assert after_rules != before
    weights = tmp_path / "assets" / verdicts.MODEL_RESOURCE
    weights.write_bytes(weights.read_bytes() + b" ")
    assert _version_of(tmp_path, monkeypatch) != after_rules
