"""npm packages for the tests that run real npm software (MCP servers, the conformance suite): installed into a folder
of the test run with npm, never run through npx."""
import shutil, subprocess
from pathlib import Path

import pytest

def npm_installed(folder: Path, packages: list, needed: list) -> None:
    "Install `packages` into `folder` unless every path in `needed` exists; skip the test when npm is missing"
    if all(p.exists() for p in needed): return
    npm = shutil.which('npm')
    if npm is None: pytest.skip(f'npm is not installed: this test needs {", ".join(packages)} (bash .ci/run installs them)')
    folder.mkdir(parents=True, exist_ok=True)
    subprocess.run([npm, 'install', '--no-audit', '--no-fund', '--prefix', str(folder), *packages], check=True, capture_output=True, timeout=300)
