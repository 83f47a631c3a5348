"""Launch commands in scripts, Dockerfiles and YAML: found in a tree walk, reported at the line and
column of the word in the original file, with target versions from pyproject.toml or the flag."""

from __future__ import annotations

import json

import pytest

from errkb.cli import main

FILES = {
    "serve.sh": (
        "#!/bin/sh\n"
        "export VLLM_ATTENTION_BACKEND=FLASH_ATTENTION\n"
        "vllm serve Qwen/Qwen2.5-7B \\\n"
        "    --kv-cache-dtype fp8 \\\n"
        "    --attention-backend 'sdpa'  # a comment\n"
        "echo done && python3 -m sglang.launch_server --model-path m --attention-backend=torch_sdpa\n"
    ),
    "Dockerfile": (
        "FROM vllm/vllm-openai:latest\n"
        "ENV VLLM_ATTENTION_BACKEND FLASH_ATTN_V2\n"
        "CMD [\"python3\", \"-m\", \"sglang.launch_server\", \"--attention-backend\", \"FLASHINFER\"]\n"
    ),
    "compose.yaml": (
        "services:\n"
        "  a:\n"
        "    command: vllm serve m --attention-backend xformer\n"
        "  b:\n"
        "    command: [\"python3\", \"-m\", \"sglang.launch_server\", \"--attention-backend\", \"sdpa\"]\n"
    ),
    "k8s/deploy.yml": (
        "apiVersion: apps/v1\n"
        "kind: Deployment\n"
        "spec:\n"
        "  template:\n"
        "    spec:\n"
        "      containers:\n"
        "        - name: server\n"
        "          command: [\"/bin/sh\", \"-c\"]\n"
        "          args:\n"
        "            - |\n"
        "              pip list\n"
        "              vllm serve m --attention-backend FLASH_ATTN3\n"
        "          env:\n"
        "            - name: VLLM_ATTENTION_BACKEND\n"
        "              value: flash-attn\n"
    ),
    "launch.py": (
        "import subprocess\n"
        "subprocess.run(['python', '-m', 'vllm.entrypoints.openai.api_server', '--attention-backend', 'TRITON'])\n"
    ),
    "notes.yaml": "a: [unclosed\ncmd: vllm serve m --attention-backend X\n",  # malformed: reported as skipped
    "other.sh": "echo --attention-backend nothing here\n",  # no vllm/sglang: prefilter skips it
}

EXPECTED = [  # path, line, col, rule
    ("Dockerfile", 2, 28, "EKB601"),
    ("Dockerfile", 3, 71, "EKB701"),
    ("compose.yaml", 3, 47, "EKB601"),
    ("compose.yaml", 5, 80, "EKB701"),
    ("k8s/deploy.yml", 12, 48, "EKB601"),
    ("k8s/deploy.yml", 15, 22, "EKB601"),
    ("launch.py", 2, 94, "EKB601"),
    ("serve.sh", 2, 31, "EKB601"),
    ("serve.sh", 5, 26, "EKB601"),
    ("serve.sh", 6, 81, "EKB701"),
]


@pytest.fixture
def tree(tmp_path, monkeypatch):
    for name, text in FILES.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def _run(capsys, *args):
    rc = main(["lint", "--no-cache", "--format", "json", *args])
    out, err = capsys.readouterr()
    return rc, json.loads(out), err


def test_positions_in_every_file_type(tree, capsys):
    rc, found, err = _run(capsys, ".")
    assert rc == 1
    got = [(f["path"], f["line"], f["col"], f["rule"]) for f in found]
    assert got == EXPECTED
    assert "skipped notes.yaml: cannot read as yaml at line" in err
    by = {(f["path"], f["line"]): f for f in found}
    assert "Unknown attention backend: 'sdpa'" in by[("serve.sh", 5)]["message"]
    assert "invalid choice: 'FLASHINFER'" in by[("Dockerfile", 3)]["message"]


def test_named_file_and_target_versions(tree, capsys):
    (tree / "pyproject.toml").write_text('[tool.errkb.versions]\nvllm = "0.11.0"\n')
    (tree / "old.sh").write_text("vllm serve m --attention-backend FLASHINFER\n")
    rc, found, _ = _run(capsys, "old.sh")
    assert [(f["line"], f["col"], f["rule"]) for f in found] == [(1, 34, "EKB603")]
    rc, found, _ = _run(capsys, "old.sh", "--target-version", "vllm==0.13.0")
    assert rc == 0 and found == []


def test_bad_target_version_is_a_usage_error(tree, capsys):
    assert main(["lint", "--target-version", "vllm=0.11", "serve.sh"]) == 2
    assert "PACKAGE==VERSION" in capsys.readouterr().err


def test_suppression_in_a_shell_comment(tree, capsys):
    (tree / "s.sh").write_text("vllm serve m --attention-backend sdpa  # errkb: ignore[EKB601]\n")
    rc, found, _ = _run(capsys, "s.sh")
    assert rc == 0 and found == []
