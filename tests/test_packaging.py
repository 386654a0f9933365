"""The install claims one import name, `kverify`, and nothing generic like `model` or `impl`."""
import os
import subprocess
import sys
import tomllib

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def test_wheel_installs_only_kverify(tmp_path):
    target = tmp_path / "site"
    subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--no-build-isolation",
                    "--disable-pip-version-check", "--target", str(target), ROOT],
                   check=True, capture_output=True)
    top = sorted(p for p in os.listdir(target) if not p.endswith((".dist-info", ".egg-info")) and p != "bin")
    assert top == ["kverify"], top
    installed = target / "kverify"
    for sub in ("impl", "model", "invariants", "stateful_tests", "specs", "reports", "commands"):
        assert (installed / sub / "__init__.py").exists(), sub


def test_every_package_folder_is_mapped():
    with open(os.path.join(ROOT, "pyproject.toml"), "rb") as fh:
        mapping = tomllib.load(fh)["tool"]["setuptools"]["package-dir"]
    assert set(mapping.values()) >= {"impl", "model", "invariants", "stateful_tests", "specs", "reports"}
    for folder in mapping.values():
        assert os.path.isfile(os.path.join(ROOT, folder, "__init__.py")), folder


def test_python_dash_m_and_console_script_agree():
    out = subprocess.run([sys.executable, "-m", "kverify", "--version"], capture_output=True, text=True)
    assert out.returncode == 0 and out.stdout.startswith("kverify ")


def test_bad_usage_is_one_line_exit_2():
    out = subprocess.run([sys.executable, "-m", "kverify", "no-such-command"], capture_output=True, text=True)
    assert out.returncode == 2
    assert len(out.stderr.strip().splitlines()) == 1
    assert "Traceback" not in out.stderr
