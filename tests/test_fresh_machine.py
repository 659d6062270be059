"""`make test` on a fresh machine: Debian's chromium is installed (as root, with
apt-get) or the run stops before any test with one line saying what to install.

The script is run with a fake `id` and `apt-get` first on PATH and CHROMIUM
pointing into a temporary folder, so nothing is installed for real."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SCRIPT = REPO / "scripts" / "ensure_chromium.sh"
SH = shutil.which("sh") or "/bin/sh"
MAKE = shutil.which("make")


def fake_bin(folder: Path, *, uid: int, apt: str | None) -> Path:
    """`id` printing `uid`, and (unless apt is None) an `apt-get` that logs its
    arguments and runs `apt` as its body."""
    folder.mkdir()
    (folder / "id").write_text(f"#!{SH}\necho {uid}\n")
    if apt is not None:
        (folder / "apt-get").write_text(f'#!{SH}\necho "$@" >> "{folder}/apt.log"\n{apt}\n')
    for tool in folder.iterdir():
        tool.chmod(0o755)
    return folder


def run(bin_dir: Path, chromium: Path, *, only_fakes: bool = False, command=None):
    path = str(bin_dir) if only_fakes else f"{bin_dir}{os.pathsep}{os.environ['PATH']}"
    env = {**os.environ, "PATH": path, "CHROMIUM": str(chromium)}
    return subprocess.run(
        command or [SH, str(SCRIPT)], cwd=REPO, env=env, capture_output=True, text=True, timeout=60, check=False
    )


def test_present_chromium_is_left_alone(tmp_path):
    chromium = tmp_path / "chromium"
    chromium.write_text("#!/bin/sh\n")
    chromium.chmod(0o755)
    bins = fake_bin(tmp_path / "bin", uid=0, apt="exit 1")
    out = run(bins, chromium)
    assert (out.returncode, out.stdout, out.stderr) == (0, "", "")
    assert not (bins / "apt.log").exists()


def test_without_root_it_stops_with_one_line_naming_the_packages(tmp_path):
    bins = fake_bin(tmp_path / "bin", uid=1000, apt="exit 0")
    out = run(bins, tmp_path / "chromium")
    assert out.returncode == 1 and out.stdout == ""
    lines = out.stderr.splitlines()
    assert len(lines) == 1
    assert "apt-get install chromium fonts-dejavu-core" in lines[0] and str(tmp_path / "chromium") in lines[0]
    assert not (bins / "apt.log").exists()


def test_as_root_it_installs_chromium_and_fonts_with_apt(tmp_path):
    chromium = tmp_path / "chromium"
    install = f'case "$1" in install) printf "#!/bin/sh\\n" > "{chromium}"; chmod +x "{chromium}";; esac'
    bins = fake_bin(tmp_path / "bin", uid=0, apt=install)
    out = run(bins, chromium)
    assert out.returncode == 0, out.stderr
    calls = (bins / "apt.log").read_text().splitlines()
    assert calls[0] == "update -qq"
    assert calls[1].startswith("install -y") and calls[1].endswith("chromium fonts-dejavu-core")
    assert os.access(chromium, os.X_OK)


@pytest.mark.parametrize("apt", ["exit 0", None], ids=["apt-without-chromium", "no-apt"])
def test_as_root_when_apt_cannot_help_it_stops_with_one_line(tmp_path, apt):
    bins = fake_bin(tmp_path / "bin", uid=0, apt=apt)
    out = run(bins, tmp_path / "chromium", only_fakes=apt is None)
    assert out.returncode == 1
    assert len(out.stderr.splitlines()) == 1 and str(tmp_path / "chromium") in out.stderr


def test_make_test_checks_chromium_before_running_any_test(tmp_path):
    assert MAKE, "make test needs make"
    dry = subprocess.run(
        [MAKE, "-n", "test"], cwd=REPO, capture_output=True, text=True, timeout=60, check=False
    ).stdout.splitlines()
    check = next(i for i, line in enumerate(dry) if "ensure_chromium.sh" in line)
    tests = next(i for i, line in enumerate(dry) if "-m pytest" in line)
    assert check < tests
    bins = fake_bin(tmp_path / "bin", uid=1000, apt=None)
    out = run(bins, tmp_path / "chromium", command=[MAKE, "-s", "browser-deps"])
    assert out.returncode != 0 and "apt-get install chromium fonts-dejavu-core" in out.stderr
    ci = [line for line in (REPO / ".ci" / "run").read_text().splitlines() if not line.lstrip().startswith("#")]
    assert "make test" in ci and not [line for line in ci if "apt-get" in line]  # one place installs chromium
