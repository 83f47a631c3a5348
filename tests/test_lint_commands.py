"""Launch commands in scripts, Dockerfiles and YAML: found in a tree walk, reported at the line and
column of the word in the original file, with target versions from pyproject.toml or the flag."""

from __future__ import annotations

import io
import json
import time

import pytest

from errkb.cli import main
from errkb.lint.rule import all_rules

K8S_CONTAINERS = "apiVersion: apps/v1\nkind: Deployment\nspec:\n  template:\n    spec:\n      containers:\n"

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
        K8S_CONTAINERS +
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
    "README.md": (
        "# Serve\n"
        "```bash\n"
        "vllm serve Qwen/Qwen3-8B \\\n"
        "    --attention-backend FLASH_ATTN_3\n"
        "```\n"
        "```console\n"
        "$ export VLLM_ATTENTION_BACKEND=flash_attn\n"
        "INFO: --attention-backend sdpa (output, not a command)\n"
        "(venv) $ vllm serve m --attention-backend <BACKEND>\n"
        "$ vllm serve m \\\n"
        "    --attention-backend sdpa  # a continued command, not output\n"
        "```\n"
        "```python\n"
        "vllm serve m --attention-backend sdpa  # not a shell block\n"
        "```\n"
        "1. a list\n"
        "   ~~~sh\n"
        "   python -m sglang.launch_server --attention-backend=sdpa\n"
        "   ~~~\n"
    ),
    "demo.ipynb": json.dumps({"cells": [
        {"cell_type": "markdown", "source": ["!vllm serve m --attention-backend nope\n"]},
        {"cell_type": "code", "source": ["!pip install vllm\n", "!vllm serve m \\\n",
                                        "    --attention-backend \"FLASH_ATTENTION\"\n"]},
        {"cell_type": "code", "source": "%%bash\nexport VLLM_ATTENTION_BACKEND=XFORMER\n"},
        {"cell_type": "code", "source": ["from vllm import LLM\n",
                                        "llm = LLM(model=\"m\", attention_backend=\"sdpa\")  # caf\u00e9\n"]},
        {"cell_type": "code", "source": ["help?\n"]},  # IPython syntax: the cell is left out
    ], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}, indent=1),
    "recipes/sft.yaml": (
        "model_name_or_path: Qwen/Qwen2.5-1.5B-Instruct\n"
        "attn_implementation: flash_attn_2\n"
        "torch_dtype: bfloat16\n"
    ),
    "notes.yaml": "a: [unclosed\ncmd: vllm serve m --attention-backend X\n",  # malformed: reported as skipped
    "other.sh": "echo --attention-backend nothing here\n",  # no vllm/sglang: prefilter skips it
}

EXPECTED = [  # path, line, col, rule
    ("Dockerfile", 2, 28, "EKB601"),
    ("Dockerfile", 3, 71, "EKB701"),
    ("README.md", 4, 25, "EKB601"),
    ("README.md", 7, 33, "EKB601"),
    ("README.md", 11, 25, "EKB601"),
    ("README.md", 18, 55, "EKB701"),
    ("compose.yaml", 3, 47, "EKB601"),
    ("compose.yaml", 5, 80, "EKB701"),
    ("demo.ipynb", 14, 32, "EKB601"),
    ("demo.ipynb", 19, 53, "EKB601"),
    ("demo.ipynb", 25, 29, "EKB601"),
    ("k8s/deploy.yml", 12, 48, "EKB601"),
    ("k8s/deploy.yml", 15, 22, "EKB601"),
    ("launch.py", 2, 94, "EKB601"),
    ("recipes/sft.yaml", 2, 22, "EKB801"),
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
    lines = FILES["demo.ipynb"].splitlines()  # each finding points at the value inside the JSON string
    for f in found:
        if f["path"] == "demo.ipynb":
            assert lines[f["line"] - 1][f["col"] - 1:f["end_col"] - 1] in ('FLASH_ATTENTION', 'XFORMER', 'attention_backend=\\"sdpa\\"')


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


@pytest.mark.parametrize("name", ["Dockerfile", "serve.sh", "compose.yaml", "k8s/deploy.yml", "launch.py", "README.md",
                                  "demo.ipynb", "recipes/sft.yaml"])
def test_stdin_under_a_command_file_name(tree, capsys, monkeypatch, name):
    """`errkb lint - --stdin-filename NAME` lints the text as the file type NAME says."""
    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(FILES[name].encode())))
    rc, found, _ = _run(capsys, "-", "--stdin-filename", name)
    assert rc == 1
    assert [(f["path"], f["line"], f["col"], f["rule"]) for f in found] == [e for e in EXPECTED if e[0] == name]


def test_target_versions_reach_stdin_and_the_cache_key(tree, capsys, monkeypatch):
    (tree / "pyproject.toml").write_text('[tool.errkb.versions]\nvllm = "0.11.0"\n')
    (tree / "old.sh").write_text("vllm serve m --attention-backend FLASHINFER\n")

    def cached_run(*args):
        rc = main(["lint", "--format", "json", "old.sh", *args])
        return rc, [f["rule"] for f in json.loads(capsys.readouterr().out)]

    assert cached_run() == (1, ["EKB603"])
    assert cached_run("--target-version", "vllm==0.13.0") == (0, [])  # not the 0.11.0 result
    assert cached_run() == (1, ["EKB603"])
    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(b"vllm serve m --attention-backend FLASHINFER\n")))
    rc, found, _ = _run(capsys, "-", "--stdin-filename", "new.sh")
    assert [f["rule"] for f in found] == ["EKB603"]


def test_the_time_limit_applies_to_command_files(tree, capsys, monkeypatch):
    rule = all_rules()["EKB601"]
    check = rule.check_launch

    def slow(self, launch, ctx):  # the timer, not this loop's bound, must end it
        for _ in range(2000):
            time.sleep(0.01)
        return check(self, launch, ctx)

    monkeypatch.setattr(rule, "check_launch", slow)
    rc, found, err = _run(capsys, "serve.sh", "launch.py", "--select", "EKB601", "--file-timeout", "0.05")
    assert "skipped serve.sh: timed out" in err and "skipped launch.py: timed out" in err


def test_the_rule_table_has_the_config_rules_and_follows_the_choice_tables(tmp_path, monkeypatch):
    from errkb import layout
    from errkb.lint import table

    rows = table.rule_table(tmp_path)
    for code in ("EKB601", "EKB604", "EKB701", "EKB705", "EKB801", "EKB802"):
        assert rows[code].prefilter == all_rules()[code].PREFILTER
    assert table.rule_table(tmp_path) == rows  # read back from the cached JSON
    copy = tmp_path / "choices.json"
    copy.write_bytes(layout.lint_choices_path(layout.default_data_dir()).read_bytes())
    monkeypatch.setattr(layout, "lint_choices_path", lambda data_dir: copy)
    try:
        table.linter_fingerprint.cache_clear()
        before = table.linter_fingerprint()
        copy.write_bytes(copy.read_bytes() + b"\n")
        table.linter_fingerprint.cache_clear()
        assert table.linter_fingerprint() != before  # new choices: new cache keys and a new table
    finally:
        table.linter_fingerprint.cache_clear()


def _notebook(*cells: list[str]) -> str:
    return json.dumps({"cells": [{"cell_type": "code", "source": c} for c in cells],
                       "metadata": {}, "nbformat": 4, "nbformat_minor": 5}, indent=1)


def test_notebook_suppressions_and_no_fixes(tmp_path, monkeypatch, capsys):
    """A suppression works in a shell line and in a Python cell of a notebook; a Python finding in a
    notebook has no fix (its offsets would be in the assembled module), and --fix leaves the file."""
    monkeypatch.chdir(tmp_path)
    nb = _notebook(["!vllm serve m --attention-backend sdpa  # errkb: ignore[EKB601]\n"],
                   ["from vllm import LLM\n", "LLM(model='m', attention_backend='sdpa')  # errkb: ignore\n"],
                   ["from flash_attn.cute import flash_attn_func\n", "out = flash_attn_func(q, k, v, num_splits=4)\n"])
    (tmp_path / "n.ipynb").write_text(nb)
    rc, found, _ = _run(capsys, "n.ipynb", "--gpu-arch", "sm90")
    assert [(f["line"], f["rule"]) for f in found] == [(20, "EKB201")]
    assert "fix" not in found[0]
    assert main(["lint", "--no-cache", "--fix", "n.ipynb", "--gpu-arch", "sm90"]) == 1
    assert (tmp_path / "n.ipynb").read_text() == nb


def test_notebook_cells_form_one_module(tmp_path, monkeypatch, capsys):
    """An import in one cell resolves a call in a later one; magics and shell lines do not break it."""
    monkeypatch.chdir(tmp_path)
    nb = _notebook(["%matplotlib inline\n", "import torch\n", "from transformers import AutoModelForCausalLM\n"],
                   ["files = !ls\n", "m = AutoModelForCausalLM.from_pretrained(\n",
                    "    'm', attn_implementation='flash_attention_2', torch_dtype=torch.float32)\n"])
    (tmp_path / "n.ipynb").write_text(nb)
    rc, found, _ = _run(capsys, "n.ipynb")
    assert [(f["line"], f["rule"]) for f in found] == [(16, "EKB802")]
    line = nb.splitlines()[15]
    assert line[found[0]["col"] - 1:found[0]["end_col"] - 1] == "torch_dtype=torch.float32"


def test_vllm_use_v1_by_release(tmp_path, monkeypatch, capsys):
    """VLLM_USE_V1 is read in vLLM 0.7.3-0.11.0; 0.12-0.16 ignore it silently (the hint says so),
    0.17+ warn that the variable is unknown (the warning the finding quotes)."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "run.sh").write_text("export VLLM_USE_V1=0\nvllm serve m\n")
    for version, silent in (("0.11.0", None), ("0.13.0", True), ("0.16.0", True), ("0.17.0", False), ("0.20.0", False)):
        rc, found, _ = _run(capsys, "run.sh", "--target-version", f"vllm=={version}")
        if silent is None:
            assert found == []
            continue
        assert [(f["line"], f["col"], f["rule"]) for f in found] == [(1, 20, "EKB602")]
        message = found[0]["message"]
        assert "Unknown vLLM environment variable detected: VLLM_USE_V1" in message and "0.7.3-0.11.0" in message
        assert ("ignores it without this warning" in message) == silent


def test_docker_run_of_the_vllm_image(tmp_path, monkeypatch, capsys):
    """`docker run ... vllm/vllm-openai[:TAG] OPTIONS`: the image's entrypoint is the OpenAI server,
    so the words after the image are its options, `-e/--env NAME=value` before it the container's
    environment, and the tag the target version (fifth held-out round, vllm-project/vllm#35720)."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "run.sh").write_text(
        "sudo docker run -it --rm -v ~/.cache:/root/.cache --gpus=all -e VLLM_ATTENTION_BACKEND=FLASH_ATTN_V2 \\\n"
        "    vllm/vllm-openai:v0.8.5 --model m\n"
        "docker run --env=VLLM_USE_V1=1 -p 8000:8000 docker.io/vllm/vllm-openai:v0.16.0 m --attention-backend sdpa\n"
        "podman container run vllm/vllm-openai:v0.11.0 --model m --attention-backend FLASHINFER\n"
        "docker run --entrypoint bash vllm/vllm-openai:v0.16.0 -c 'echo --attention-backend sdpa'\n"
        "docker run myorg/server:1 --attention-backend sdpa\n"
        "docker pull vllm/vllm-openai:v0.16.0 --attention-backend sdpa\n"
    )
    rc, found, _ = _run(capsys, "run.sh", "--select", "EKB6")
    got = [(f["line"], f["col"], f["rule"]) for f in found]
    assert got == [(1, 88, "EKB601"), (3, 30, "EKB602"), (3, 102, "EKB601"), (4, 77, "EKB603")]
    by = {(f["line"], f["rule"]): f["message"] for f in found}
    assert "[target vllm 0.8.5: image vllm/vllm-openai:v0.8.5 at line 2]" in by[(1, "EKB601")]
    assert "[target vllm 0.11.0: image vllm/vllm-openai:v0.11.0 at line 4]" in by[(4, "EKB603")]


def test_docker_run_with_an_entrypoint_reads_the_command_it_makes(tmp_path, monkeypatch, capsys):
    """`docker run --entrypoint python3 IMAGE -m sglang.launch_server ...` (sixth held-out round,
    sgl-project/sglang#3658) and `--entrypoint vllm IMAGE serve ...`: the entrypoint and the words
    after the image are the server's command line; a vLLM/SGLang image's tag is the target."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "run.sh").write_text(
        "docker run --gpus all --entrypoint=python3 lmsysorg/sglang:v0.4.3-cu124 -m sglang.launch_server "
        "--model-path m --attention-backend fa3\n"
        "docker run -e X=1 --entrypoint vllm vllm/vllm-openai:v0.10.0 serve m --attention-backend FLASH_ATTN\n"
        "docker run --entrypoint bash lmsysorg/sglang:v0.4.3-cu124 -c 'x -m sglang.launch_server --attention-backend fa3'\n"
    )
    rc, found, _ = _run(capsys, "run.sh", "--select", "EKB603,EKB701")
    got = [(f["line"], f["rule"]) for f in found]
    assert got == [(1, "EKB701"), (2, "EKB603")]
    assert "[target sglang 0.4.3: image lmsysorg/sglang:v0.4.3-cu124 at line 1]" in found[0]["message"]


def test_compose_and_kubernetes_containers_of_the_vllm_image(tmp_path, monkeypatch, capsys):
    """A vllm/vllm-openai service or container that keeps the image's entrypoint passes only the
    server's options: compose's `command:` (string or list), Kubernetes' `args:`. An `entrypoint:`
    (compose) or a `command:` beside `args:` (Kubernetes) runs something else: nothing is read."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "compose.yaml").write_text(
        "services:\n"
        "  a:\n"
        "    image: vllm/vllm-openai:v0.11.0\n"
        "    command: --model m --attention-backend FLASHINFER\n"
        "  b:\n"
        "    image: vllm/vllm-openai:v0.11.0\n"
        "    command: [\"--model\", \"m\", \"--attention-backend\", \"FLASHINFER\"]\n"
        "  c:\n"
        "    image: vllm/vllm-openai:v0.11.0\n"
        "    entrypoint: [\"bash\", \"-c\"]\n"
        "    command: [\"echo --attention-backend FLASHINFER\"]\n"
        "  d:\n"
        "    image: myorg/server:1\n"
        "    command: --attention-backend FLASHINFER\n"
    )
    (tmp_path / "deploy.yaml").write_text(
        K8S_CONTAINERS +
        "        - name: server\n"
        "          image: vllm/vllm-openai:v0.11.0\n"
        "          args: [\"--model\", \"m\", \"--attention-backend\", \"FLASHINFER\"]\n"
        "        - name: other\n"
        "          image: vllm/vllm-openai:v0.11.0\n"
        "          command: [\"python3\", \"tool.py\"]\n"
        "          args: [\"--attention-backend\", \"FLASHINFER\"]\n"
    )
    rc, found, _ = _run(capsys, "compose.yaml", "--select", "EKB6")
    assert [(f["line"], f["col"], f["rule"]) for f in found] == [(4, 44, "EKB603"), (7, 55, "EKB603")]
    assert "[target vllm 0.11.0: image vllm/vllm-openai:v0.11.0 at line 3]" in found[0]["message"]
    rc, found, _ = _run(capsys, "deploy.yaml", "--select", "EKB6")
    assert [(f["line"], f["rule"]) for f in found] == [(9, "EKB603")]


def test_triton_fp8_kv_below_sm80_suggests_float16(tmp_path, monkeypatch, capsys):
    """Below sm80 there is no bfloat16: the finding repeats vLLM's own advice for those GPUs
    (float16), and the hint offers FlashInfer only for the Ampere archs."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "run.sh").write_text("vllm serve m --attention-backend TRITON_ATTN --kv-cache-dtype fp8\n")
    _, found, _ = _run(capsys, "run.sh", "--gpu-arch", "sm70,sm86")
    message = found[0]["message"]
    assert "on an sm70 GPU (compute capability 7.0)" in message and "Re-run with --kv-cache-dtype float16." in message
    assert "auto/float16 on sm70" in message and "auto/bfloat16 on sm86, or another backend" in message
    _, found, _ = _run(capsys, "run.sh", "--gpu-arch", "sm86")
    assert "Re-run with --kv-cache-dtype bfloat16." in found[0]["message"] and "auto/float16" not in found[0]["message"]
