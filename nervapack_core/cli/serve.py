"""``nervapack serve``: run the dashboard (Streamlit) on a workspace, or on the demo."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import threading
import time
import webbrowser
from pathlib import Path

import click

from ..dashboard import DEMO_ENV, MEMORY_ENV, ROOT_ENV
from ..errors import NervapackError
from ..workspace import Workspace, find_workspace, memory_db_path
from .common import echo

__all__ = ["register", "serve", "app_dir", "streamlit_command"]


def app_dir() -> Path:
    """The folder holding ``app.py``, ``pages/`` and ``.streamlit/config.toml``: the source
    checkout (editable install) first, then ``<prefix>/share/nervapack-core``."""
    checkout = Path(__file__).resolve().parents[2]
    candidates = [checkout, Path(sys.prefix) / "share" / "nervapack-core",
                  Path(sys.base_prefix) / "share" / "nervapack-core"]
    for folder in candidates:
        if (folder / "app.py").is_file() and (folder / "pages").is_dir():
            return folder
    raise NervapackError("Cannot find the dashboard (app.py); looked in: "
                         + ", ".join(str(c) for c in candidates) + ". Reinstall nervapack-core.")


def streamlit_command(folder: Path, port: int, address: str) -> list[str]:
    return [
        sys.executable, "-m", "nervapack_core.dashboard.launch", "run", str(folder / "app.py"),
        "--server.headless", "true",
        "--server.fileWatcherType", "none",
        "--server.runOnSave", "false",
        "--browser.gatherUsageStats", "false",
        "--server.address", address,
        "--server.port", str(port),
        "--client.toolbarMode", "viewer",
    ]


def _port_free(address: str, port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind((address, port))
        except OSError:
            return False
    return True


def _open_when_ready(url: str, address: str, port: int, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            with socket.create_connection((address, port), timeout=1):
                webbrowser.open(url)
                return
        except OSError:
            time.sleep(0.3)


@click.command("serve")
@click.argument("path", required=False, type=click.Path(file_okay=False, path_type=Path))
@click.option("--port", type=click.IntRange(1, 65535), default=8501, show_default=True, help="Port to listen on.")
@click.option("--address", default="127.0.0.1", show_default=True,
              help="Address to bind (the default serves this machine only).")
@click.option("--no-browser", is_flag=True, help="Do not open a browser tab.")
@click.option("--demo", is_flag=True, help="Serve the bundled demo workspace (built once, offline).")
def serve(path, port, address, no_browser, demo):
    """Launch the dashboard on the workspace at PATH (default: the nearest one).

    With no workspace found, or with --demo, it serves a demo workspace: NervaPack
    Core's own source ingested plus a sample decision memory.
    """
    if path is not None and not path.exists():
        raise NervapackError(f"{path} does not exist.")
    root: Path | None = None
    if not demo:
        ws = find_workspace(path)
        if ws is not None and ws.dir.is_dir():
            root = ws.root
        else:
            where = path or Path.cwd()
            echo(f"No NervaPack workspace at or above {where} (run `nervapack ingest {where}` to create "
                       "one); serving the demo workspace instead.", err=True)
    is_demo = root is None
    if is_demo:
        from ..dashboard.demo import ensure_demo

        root = ensure_demo(progress=lambda msg: echo(msg, err=True))
    assert root is not None

    folder = app_dir()
    if not _port_free(address, port):
        raise NervapackError(f"Port {port} on {address} is already in use; choose another with --port.")

    env = dict(os.environ)
    env[ROOT_ENV] = str(root)
    env.pop("NERVAPACK_HOME", None)
    if is_demo:
        env[DEMO_ENV] = "1"
        env[MEMORY_ENV] = str(Workspace(root).memory_db)
    else:
        env.pop(DEMO_ENV, None)
        env[MEMORY_ENV] = str(memory_db_path(Workspace(root).memory_db))
    # Streamlit's own network-facing settings, in case a user config says otherwise
    env["STREAMLIT_BROWSER_GATHER_USAGE_STATS"] = "false"
    env["STREAMLIT_SERVER_HEADLESS"] = "true"

    host = "localhost" if address in ("127.0.0.1", "localhost") else address
    url = f"http://{host}:{port}"
    echo(f"NervaPack dashboard for {root}{' (demo)' if is_demo else ''}: {url}  (Ctrl-C to stop)", err=True)
    if not no_browser:
        threading.Thread(target=_open_when_ready, args=(url, address, port), daemon=True).start()
    proc = subprocess.Popen(streamlit_command(folder, port, address), cwd=str(folder), env=env)
    stopped = []

    def _stop(signum, frame):  # `kill <pid>` stops the server too, not only this process
        stopped.append(signum)
        proc.terminate()

    previous = signal.signal(signal.SIGTERM, _stop)
    try:
        code = proc.wait()
    except KeyboardInterrupt:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
        raise
    finally:
        signal.signal(signal.SIGTERM, previous)
    if stopped:
        return
    if code:
        raise NervapackError(f"Streamlit exited with status {code}.")


def register(cli: click.Group) -> None:
    cli.add_command(serve)
