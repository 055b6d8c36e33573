"""The documented production set-up (docker-compose.yml with its defaults and the .env the README
asks for) passes `manage.py check --deploy` without a warning; the web server streams long
downloads on threaded workers with sane timeouts (config/gunicorn.py, used by Dockerfile and compose)."""

import os
import re
import runpy
import secrets
import subprocess
import sys
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]
DOTENV = {"SECRET_KEY": secrets.token_urlsafe(64), "ALLOWED_HOSTS": "clusterplan.example.com"}


def compose_env(**overrides: str) -> dict[str, str]:
    """The web service's environment as compose resolves it from its defaults and the .env."""
    web = yaml.safe_load((ROOT / "docker-compose.yml").read_text())["services"]["web"]
    given = {**DOTENV, **overrides}

    def resolve(value: str) -> str:
        def sub(m: re.Match) -> str:
            name, op, default = m.group(1), m.group(2), m.group(3)
            if name in given:
                return given[name]
            assert op == ":-", f"{name} has no default and is not in the documented .env"
            return default

        return re.sub(r"\$\{(\w+)(:-|:\?)([^}]*)\}", sub, str(value))

    return {k: resolve(v) for k, v in web["environment"].items()}


def check_deploy(env: dict[str, str]) -> subprocess.CompletedProcess:
    clean = {k: v for k, v in os.environ.items() if k in ("PATH", "HOME", "LANG")}
    clean.update(env, CLUSTERPLAN_VAR_DIR=str(ROOT / "var"))
    return subprocess.run(
        [sys.executable, "manage.py", "check", "--deploy", "--fail-level", "WARNING"],
        cwd=ROOT,
        env=clean,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_check_deploy_is_clean_in_the_documented_production_setup():
    out = check_deploy(compose_env())
    assert out.returncode == 0, out.stdout + out.stderr
    assert "no issues" in out.stdout


def test_check_deploy_warns_for_the_plain_http_trial():
    out = check_deploy(compose_env(SECURE_HTTPS="0"))
    assert out.returncode != 0 and "security.W0" in out.stdout + out.stderr


def test_web_server_uses_threaded_workers_with_sane_timeouts():
    conf = runpy.run_path(str(ROOT / "config" / "gunicorn.py"))
    assert conf["worker_class"] == "gthread"  # heartbeats continue while a thread streams a CSV
    assert 30 <= conf["timeout"] <= 120 and conf["graceful_timeout"] <= conf["timeout"]
    assert conf["limit_request_line"] <= 8190 and conf["limit_request_fields"] <= 100
    web = yaml.safe_load((ROOT / "docker-compose.yml").read_text())["services"]["web"]
    assert web["command"][:3] == ["gunicorn", "-c", "config/gunicorn.py"]
    dockerfile = (ROOT / "Dockerfile").read_text()
    assert 'CMD ["gunicorn", "-c", "config/gunicorn.py", "config.wsgi"]' in dockerfile
