"""Target versions from the project's own pins and images (lint/pins.py), and their precedence:
configured > the container's image > the file's own pins > the nearest project pin."""

from __future__ import annotations

import json

import pytest

from errkb.cli import main
from errkb.lint import pins


def test_file_versions_read_images_and_exact_pins():
    text = ("FROM docker.io/vllm/vllm-openai:v0.8.5\n"
            "RUN pip install 'sglang[all]==0.4.6.post5' vllm-flash-attn==2.6.2 transformers>=4.40\n"
            "# lmsysorg/sglang:v0.4.6.post5-cu124 vllm/vllm-openai:latest vllm/vllm-openai:v0.9.0rc1\n")
    got = pins.file_versions(text)
    assert {k: v[0] for k, v in got.items()} == {"vllm": "0.8.5", "sglang": "0.4.6.post5"}
    assert got["vllm"][1] == "image docker.io/vllm/vllm-openai:v0.8.5 at line 1"


def test_two_versions_of_one_package_in_a_file_give_none():
    assert pins.file_versions("pip install vllm==0.8.5\npip install vllm==0.9.2\ntransformers==4.51.3\n") == {
        "transformers": ("4.51.3", "transformers==4.51.3 at line 3")}


def test_project_versions_nearest_folder_and_ambiguity(tmp_path):
    (tmp_path / "requirements.txt").write_text("vllm==0.11.0\ntransformers==4.52.0\n")
    sub = tmp_path / "examples" / "a"
    sub.mkdir(parents=True)
    (tmp_path / "examples" / "pyproject.toml").write_text('[project]\ndependencies = ["vllm==0.30.0"]\n')
    (sub / "requirements-a.txt").write_text("sglang==0.5.1\n")
    (sub / "requirements-b.txt").write_text("sglang==0.5.3\n")  # two versions: none, and no looking further up
    (tmp_path / "uv.lock").write_text('[[package]]\nname = "sglang"\nversion = "0.4.10"\n')
    got = pins.project_versions(str(sub / "run.sh"), str(tmp_path))
    assert {k: v for k, v in got.items()} == {
        "vllm": ("0.30.0", "vllm==0.30.0 in examples/pyproject.toml"),
        "transformers": ("4.52.0", "transformers==4.52.0 in requirements.txt")}
    top = pins.project_versions(str(tmp_path / "x.py"), str(tmp_path))
    assert top["sglang"] == ("0.4.10", "sglang==0.4.10 in uv.lock")


@pytest.fixture
def project(tmp_path, monkeypatch):
    (tmp_path / "pyproject.toml").write_text('[project]\ndependencies = ["vllm==0.11.0"]\n')
    (tmp_path / "serve.sh").write_text("vllm serve m --attention-backend FLASHINFER\n")
    (tmp_path / "k8s.yaml").write_text(
        "containers:\n- image: vllm/vllm-openai:v0.30.0\n  command: [vllm, serve, m]\n"
        "  env:\n  - name: VLLM_ATTENTION_BACKEND\n    value: FLASHINFER\n")
    (tmp_path / "Dockerfile").write_text("FROM vllm/vllm-openai:v0.13.0\nCMD vllm serve m --attention-backend FLASHINFER\n")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def _rules(capsys, *args):
    rc = main(["lint", "--format", "json", *args])
    found = json.loads(capsys.readouterr().out)
    return [(f["path"], f["line"], f["rule"]) for f in found], found


def test_precedence(project, capsys):
    got, found = _rules(capsys, ".")
    # serve.sh: the project's vllm==0.11.0 (no flag yet); k8s.yaml: its container's 0.30.0 (variable not
    # read); Dockerfile: its FROM image 0.13.0 (has the flag), above the project's pin
    assert got == [("k8s.yaml", 6, "EKB602"), ("serve.sh", 1, "EKB603")]
    assert "[target vllm 0.11.0: vllm==0.11.0 in pyproject.toml]" in found[1]["message"]
    assert "[target vllm 0.30.0: image vllm/vllm-openai:v0.30.0 at line 2]" in found[0]["message"]
    got, found = _rules(capsys, ".", "--target-version", "vllm==0.13.0")  # configured: wins everywhere
    assert got == [] and all("[target" not in f["message"] for f in found)


def test_an_unversioned_vllm_image_is_not_the_projects_pin(project, capsys):
    """production-stack's manifests run lmcache/vllm-openai:2025-05-05-v1 while the repository's own
    Python package pins vllm==0.13.0: the container's version is unknown, so nothing version-bound fires."""
    (project / "k8s.yaml").write_text(
        "containers:\n- image: lmcache/vllm-openai:2025-05-05-v1\n  command: [vllm, serve, m]\n"
        "  env:\n  - name: VLLM_USE_V1\n    value: '1'\n")
    (project / "Dockerfile").write_text("FROM vllm/vllm-openai:latest\nCMD vllm serve m --attention-backend FLASHINFER\n")
    (project / "Dockerfile.pinned").write_text(
        "FROM vllm/vllm-openai:latest\nRUN pip install vllm==0.11.0\nCMD vllm serve m --attention-backend FLASHINFER\n")
    (project / "pyproject.toml").write_text('[project]\ndependencies = ["vllm==0.30.0"]\n')
    assert _rules(capsys, "k8s.yaml", "Dockerfile", "Dockerfile.pinned")[0] == [("Dockerfile.pinned", 3, "EKB603")]
    (project / "crd.yaml").write_text(  # production-stack's VLLMRuntime: image: {registry, name}
        "spec:\n  image:\n    registry: docker.io\n    name: lmcache/vllm-openai:2025-05-05-v1\n"
        "  env:\n  - name: VLLM_USE_V1\n    value: '1'\n")
    (project / "values.yaml").write_text(  # Helm values: repository/tag beside the settings
        "modelSpec:\n- repository: vllm/vllm-openai\n  tag: v0.8.5\n"
        "  env:\n  - name: VLLM_USE_V1\n    value: '1'\n")
    assert _rules(capsys, "crd.yaml", "values.yaml")[0] == []  # unknown, and 0.8.5 reads it
    (project / "values.yaml").write_text(
        "modelSpec:\n- repository: vllm/vllm-openai\n  tag: v0.30.0\n"
        "  env:\n  - name: VLLM_USE_V1\n    value: '1'\n")
    assert _rules(capsys, "values.yaml")[0] == [("values.yaml", 6, "EKB602")]
    assert pins.container_versions("python:3.11", "line 1") == {}
    assert pins.container_versions("registry:5000/vllm/vllm-openai", "line 1")["vllm"][0] is None


def test_a_changed_pin_is_seen_by_the_cache(project, capsys):
    assert _rules(capsys, "serve.sh")[0] == [("serve.sh", 1, "EKB603")]
    assert _rules(capsys, "serve.sh")[0] == [("serve.sh", 1, "EKB603")]  # from the manifest
    (project / "pyproject.toml").write_text('[project]\ndependencies = ["vllm==0.13.0"]\n')
    assert _rules(capsys, "serve.sh")[0] == []


def test_stdin_reads_the_pins_above_its_name(project, capsys, monkeypatch):
    import io

    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(b"vllm serve m --attention-backend FLASHINFER\n")))
    assert _rules(capsys, "-", "--stdin-filename", "scripts/new.sh")[0] == [("scripts/new.sh", 1, "EKB603")]


_NOTES_FENCE = "```bash\nexport VLLM_USE_V1=1\nvllm serve m\n```\n"


def test_a_markdown_files_prose_names_no_target(project, capsys):
    """The ninth held-out round's GH200 notes: `vllm==0.21.0` in a prose line (one of several
    routes) is not the target of the file's fenced commands; the project's vllm==0.11.0 is, and
    0.11.0 reads VLLM_USE_V1."""
    text = ("# Notes\n\nReliable routes: (a) the NGC image, or (b) `pip install vllm==0.21.0` "
            "(vllm==0.21.0 is newest).\n\n" + _NOTES_FENCE)
    (project / "notes.md").write_text(text)
    assert pins.file_versions(text)["vllm"][0] == "0.21.0"  # the raw text names it ...
    from errkb.lint.documents import markdown_code
    assert pins.file_versions(markdown_code(text)) == {}  # ... but not inside a fence
    assert _rules(capsys, "notes.md")[0] == []
    (project / "pyproject.toml").write_text("[project]\n")  # no project pin: no target, still nothing
    assert _rules(capsys, "notes.md")[0] == []


def test_a_markdown_files_fenced_pins_are_read(project, capsys):
    (project / "notes.md").write_text("# Notes\n\n```bash\npip install vllm==0.21.0\n```\n\n" + _NOTES_FENCE)
    got, found = _rules(capsys, "notes.md")
    assert got == [("notes.md", 8, "EKB602")]
    assert "[target vllm 0.21.0: vllm==0.21.0 at line 4]" in found[0]["message"]
    # any fence, not only shell ones: an image in a Dockerfile block
    (project / "notes.md").write_text("Run it in\n\n~~~dockerfile\nFROM vllm/vllm-openai:v0.21.0\n~~~\n\n" + _NOTES_FENCE)
    got, found = _rules(capsys, "notes.md")
    assert got == [("notes.md", 8, "EKB602")]
    assert "[target vllm 0.21.0: image vllm/vllm-openai:v0.21.0 at line 4]" in found[0]["message"]
