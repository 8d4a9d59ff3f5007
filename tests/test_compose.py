"""docker-compose.yml and the Dockerfile cannot be run here (no Docker engine), so this keeps them
honest: every command they run is a real `qsg` command and every QSG_ variable a real setting."""

from __future__ import annotations

from pathlib import Path

import click
import yaml

from app.cli import main
from app.settings import Settings

ROOT = Path(__file__).resolve().parents[1]


def _resolve(cmd: list[str]) -> click.Command:
    assert cmd[0] == "qsg", cmd
    command: click.Command = main
    for word in cmd[1:]:
        if not isinstance(command, click.Group) or word.startswith("-"):
            break
        assert word in command.commands, f"'qsg {' '.join(cmd[1:])}' is not a command"
        command = command.commands[word]
    return command


def test_compose_services_use_real_commands_and_settings():
    compose = yaml.safe_load((ROOT / "docker-compose.yml").read_text())
    fields = {f"QSG_{name.upper()}" for name in Settings.model_fields}
    ours = {name: svc for name, svc in compose["services"].items() if "build" in svc}
    assert {"migrate", "qm1", "qm2", "qm3"} <= set(ours)
    for name, svc in ours.items():
        _resolve(svc["command"])
        for var in svc.get("environment", {}):
            assert var in fields, f"{name}: {var} is not a setting"
    qm_names = sorted(svc["environment"]["QSG_QMGR"] for n, svc in ours.items() if n.startswith("qm"))
    assert qm_names == ["QM1", "QM2", "QM3"]
    assert "--appendfsync" in compose["services"]["redis"]["command"]  # the durability the README promises


def test_dockerfile_runs_qsg_serve():
    text = (ROOT / "Dockerfile").read_text()
    assert 'CMD ["qsg", "serve"]' in text
    _resolve(["qsg", "serve"])
