"""`make run` on a fresh checkout: scripts/run_embedded.py with no REDIS_URL and no DATABASE_URL
(SQLite + kombu's filesystem broker + one real worker subprocess) completes a sweep started from
the browser form, and stops its worker on SIGTERM."""

import http.cookiejar
import json
import os
import re
import signal
import socket
import subprocess
import sys
import urllib.parse
import urllib.request

import pytest

from .conftest import BASE, ROOT, wait_for

pytestmark = pytest.mark.integration

AXES = {"cluster.cards": [512, 1024, 2048], "hardware.accelerator": ["ascend-910b2", "h100-sxm"]}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_embedded_run_completes_a_sweep_from_the_browser_form(tmp_path):
    port = free_port()
    env = {k: v for k, v in os.environ.items() if k not in ("REDIS_URL", "DATABASE_URL", "SQLITE_TEST_NAME")}
    env.update({"CLUSTERPLAN_VAR_DIR": str(tmp_path / "var"), "PYTHONUNBUFFERED": "1"})
    log = open(tmp_path / "run.log", "wb")  # noqa: SIM115
    proc = subprocess.Popen([sys.executable, "scripts/run_embedded.py", "--port", str(port)], cwd=ROOT, env=env,
                            stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    jar = http.cookiejar.CookieJar()
    opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(jar))
    site = f"http://127.0.0.1:{port}"

    def get(path: str) -> str:
        with opener.open(site + path, timeout=10) as r:
            return r.read().decode()

    def up():
        try:
            return get("/sweeps/")
        except OSError:
            assert proc.poll() is None, (tmp_path / "run.log").read_text()
            return None

    try:
        form = wait_for(up, 60, interval=0.3, what="the embedded server")
        csrf = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', form).group(1)
        data = urllib.parse.urlencode({"csrfmiddlewaretoken": csrf, "name": "embedded", "base": json.dumps(BASE),
                                       "axes": json.dumps(AXES)}).encode()
        with opener.open(urllib.request.Request(site + "/sweeps/", data=data), timeout=30) as r:
            report_url = r.geturl()  # the form redirects to the report page
            assert r.status == 200 and "embedded" in r.read().decode()
        token = re.search(r"/sweeps/([^/]+)/$", report_url).group(1)

        def finished():
            s = json.loads(get(f"/api/v1/sweeps/shared/{token}"))
            return s if s["status"] in ("done", "failed", "cancelled") else None

        final = wait_for(finished, 60, interval=0.5, what="the sweep on the filesystem broker")
        assert final["status"] == "done", final
        assert final["progress"] == {"done": 6, "total": 6, "chunks_done": 1, "chunks_total": 1}
        page = get(f"/sweeps/{token}/")
        assert 'id="pareto"' in page and "Full estimate" in page
        csv_text = get(f"/api/v1/sweeps/shared/{token}/results?format=csv")
        assert len(csv_text.strip().splitlines()) == 7
        assert (tmp_path / "var" / "db.sqlite3").exists() and (tmp_path / "var" / "broker").is_dir()
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            code = proc.wait(30)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            raise
        log.close()
    text = (tmp_path / "run.log").read_text()
    assert "filesystem broker" in text
    assert code == 0, text[-3000:]
    assert "worker stopped" in text  # the worker subprocess went down with it (warm shutdown)
    assert "Traceback" not in text, text[-3000:]
