"""The typed TypeScript client of ``clients/examples/ts``, built from an OpenAPI document.

Its npm packages (openapi-typescript, openapi-fetch, typescript, pinned by the committed
lockfile) are installed with ``npm ci`` into the example's git-ignored ``node_modules``,
once per lockfile.  A build copies the example's program and ``tsconfig.json`` (strict)
into a folder of its own, generates ``src/glintwick.d.ts`` from the document with
openapi-typescript and compiles the program with tsc: any type error (a field looser
than the document should make it, a cast the program would need) fails the build.  The
built program then runs with node against a server's HTTP face.

``python -m tests.support.ts_client [FOLDER]`` (``make ts-client``) builds it from the
document this checkout's code serves, into ``build/ts-client`` by default.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "clients" / "examples" / "ts"
NODE = shutil.which("node")
NPM = shutil.which("npm")
#: the program's own files (the generated types are written beside them)
SOURCES = ("package.json", "tsconfig.json", "src/play.ts")


def install_packages() -> Path:
    """``npm ci`` of the example's lockfile, unless its ``node_modules`` holds that
    lockfile's install already (a stamp of its SHA-256, written once it succeeded)."""
    assert NPM is not None, "npm is not installed (`make node` installs Debian's)"
    modules = EXAMPLE / "node_modules"
    digest = hashlib.sha256((EXAMPLE / "package-lock.json").read_bytes()).hexdigest()
    stamp = modules / ".glintwick-lockfile.sha256"
    if stamp.exists() and stamp.read_text() == digest:
        return modules
    # (no install scripts: the compiler and the generator are plain JavaScript)
    command = [NPM, "ci", "--ignore-scripts", "--no-audit", "--no-fund"]
    done = subprocess.run(command, cwd=EXAMPLE, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
    stamp.write_text(digest)
    return modules


def build(document: Mapping[str, Any], out: Path) -> subprocess.CompletedProcess[str]:
    """Generate the types of ``document`` and compile the program in ``out``: tsc's
    result (its output names every type error; returncode 0: it compiled)."""
    modules = install_packages()
    (out / "src").mkdir(parents=True, exist_ok=True)
    for name in SOURCES:
        shutil.copy(EXAMPLE / name, out / name)
    link = out / "node_modules"
    if not link.exists():
        link.symlink_to(modules, target_is_directory=True)
    (out / "openapi.json").write_text(json.dumps(document, indent=1))
    generate = [
        str(modules / ".bin" / "openapi-typescript"),
        "openapi.json",
        "-o",
        "src/glintwick.d.ts",
    ]
    generated = subprocess.run(generate, cwd=out, capture_output=True, text=True, timeout=300)
    assert generated.returncode == 0, generated.stdout + generated.stderr
    compile_ = [str(modules / ".bin" / "tsc"), "-p", "tsconfig.json"]
    return subprocess.run(compile_, cwd=out, capture_output=True, text=True, timeout=300)


def run(out: Path, base_url: str) -> dict[str, Any]:
    """Run the built program against the HTTP face at ``base_url``: what it printed
    (its last line, JSON)."""
    assert NODE is not None, "node is not installed (`make node` installs Debian's)"
    played = subprocess.run(
        [NODE, "dist/play.js", base_url], cwd=out, capture_output=True, text=True, timeout=120
    )
    assert played.returncode == 0, played.stdout + played.stderr
    said: dict[str, Any] = json.loads(played.stdout.splitlines()[-1])
    return said


def main(argv: list[str]) -> int:
    from services.openapi import openapi_document  # (the document of this checkout's code)

    out = Path(argv[0]) if argv else ROOT / "build" / "ts-client"
    compiled = build(openapi_document(), out)
    print(compiled.stdout + compiled.stderr, end="")
    if compiled.returncode == 0:
        print(f"{out / 'dist' / 'play.js'}: compiled under tsc --strict from the OpenAPI document")
    return compiled.returncode


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
