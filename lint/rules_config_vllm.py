"""vLLM launch configuration: the attention backend named in `LLM(...)`/`EngineArgs(...)`,
`--attention-backend`, `attention_config` or `VLLM_ATTENTION_BACKEND`, checked against the names
each release accepts (data/lint/choices.json), and the KV-cache dtype against the target GPUs."""

from __future__ import annotations

import difflib
import json

from errkb.lint import choices
from errkb.lint.launch import ConfigRule, target_release, target_version, value_fix
from errkb.lint.rule import Example, arch_major, register

_BACKEND_KEYS = ("attention_backend", "attention_config.backend")
_ENV = "VLLM_ATTENTION_BACKEND"
_PY = "from vllm import LLM\n"


def backend_settings(launch):
    """(setting, via_env) for every place this launch names a backend."""
    out = [(s, False) for _, s in launch.texts(*_BACKEND_KEYS)]
    env = launch.env.get(_ENV)
    if env is not None and env.text is not None:
        out.append((env, True))
    return out


def reads(rel: choices.Release, via_env: bool) -> bool:
    """Whether release `rel` reads a backend name given this way (the variable went in 0.20)."""
    return rel.choices("attention_backend") is not None and (not via_env or _ENV in (rel.choices("env_vars") or ()))


def accepts(rel: choices.Release, name: str, via_env: bool) -> bool:
    """Whether release `rel` takes `name` as a backend, the way it reads it: the flag and
    attention_config upper-case it and take 'auto' (0.13+); the environment variable is read as
    written, less a '_VLLM_V1' suffix in 0.11-0.12. A form the release does not read is not judged."""
    if not reads(rel, via_env):
        return True
    names = rel.choices("attention_backend")
    if via_env:
        suffix = rel.value("env_suffix_dropped")
        return (name.removesuffix(suffix) if suffix else name) in names
    if rel.value("case_insensitive", False):
        return (name.lower() == "auto" and rel.value("auto_accepted", False)) or name.upper() in names
    return name in names


def _unknown_hint(name: str, via_env: bool, shown: choices.Release) -> str:
    bare = name.upper().removesuffix("_VLLM_V1")
    if bare != name and bare in shown.choices("attention_backend"):
        return f"use {bare} (vllm {shown.version} knows the backend by that name)"
    ever = choices.history("vllm", "attention_backend", lambda r: reads(r, via_env) and accepts(r, name, via_env))
    close = difflib.get_close_matches(name.upper(), shown.choices("attention_backend"), n=2)
    return f"{name!r} is {ever}" + (f"; did you mean {' or '.join(close)}?" if close else "")


def same_backend(name: str, ok) -> str | None:
    """The spelling a release takes for the backend `name` means, when only its case, `-` for `_`
    or the `_VLLM_V1` suffix (dropped in 0.11) is off: no choice between backends is made."""
    up = name.strip().upper().replace("-", "_")
    for candidate in (up, up.removesuffix("_VLLM_V1")):
        if candidate != name and ok(candidate):
            return candidate
    return None


@register
class VllmUnknownAttentionBackend(ConfigRule):
    """An attention backend name (`attention_backend=`, `--attention-backend`, `attention_config`
    backend, `VLLM_ATTENTION_BACKEND`) that vLLM does not know: a typo, another project's name
    (sdpa, fa3, flash_attention_2) or a name removed or renamed in a release (XFORMERS after
    0.11, the `_VLLM_V1` names after 0.10). Without a target vLLM version only names no release
    accepts are reported. A name far from every backend name vLLM, SGLang or transformers ever had
    (choices.known_name) is taken for a fork's, a plugin's or a branch's own backend and not judged."""

    CODE = "EKB601"
    NAME = "vllm-unknown-attention-backend"
    RECORDS = ("vllm-unknown-attention-backend-name",)
    FIXES = {"vllm-unknown-attention-backend-name": 1}  # "Use an enum member name", only the same backend's
    TOOL = "vllm"
    PREFILTER = ((b"attention_backend", b"vllm"), (b"attention-backend", b"vllm"), (b"VLLM_ATTENTION_BACKEND",),
                 (b"attention_config", b"vllm"), (b"attention-config", b"vllm"))
    VALID = [
        _PY + "llm = LLM(model='m', attention_backend='FLASHINFER')",
        _PY + "llm = LLM(model='m', attention_backend='flashinfer')  # upper-cased by vLLM",
        _PY + "llm = LLM(model='m', attention_config={'backend': 'auto'})",
        "import os\nos.environ['VLLM_ATTENTION_BACKEND'] = 'XFORMERS'  # fine in vLLM <= 0.11",
        "def f(name):\n    from vllm import LLM\n    return LLM(model='m', attention_backend=name)",
        Example("vllm serve Qwen/Qwen2.5-7B --attention-backend TRITON_ATTN\n", path="serve.sh"),
        Example("export VLLM_ATTENTION_BACKEND=FLASH_ATTN_VLLM_V1\nvllm serve m\n", path="serve.sh",
                versions=(("vllm", "0.9.2"),)),
        # corpus triage (SkyRL's arctic_rl scripts): a shell expansion is known only at run time
        Example('export VLLM_ATTENTION_BACKEND="${VLLM_ATTENTION_BACKEND:-FLASH_ATTN}"\nvllm serve m\n',
                path="serve.sh"),
        Example("vllm serve m --attention-backend $BACKEND\n", path="serve.sh"),
        # held-out triage (a fork's report, a pull request's test plan): the name is the fork's or
        # the branch's own backend, which no release has and no release's name is close to
        Example("```bash\nVLLM_ATTENTION_BACKEND=FLASH_ATTN_V100 vllm serve m\n```\n", path="README.md"),
        Example("vllm serve google/gemma-4-31B-it --attention-backend=GEMMA4_FLASH_ATTN\n", path="serve.sh"),
        Example("containers:\n- args: [serve, m]\n  env:\n  - name: VLLM_ATTENTION_BACKEND\n"
                "    value: $(BACKEND)\n", path="deploy.yaml"),
        # documentation: a placeholder, output lines of a console block, a block that is not shell
        Example("```console\n$ vllm serve m --attention-backend <BACKEND>\nINFO --attention-backend sdpa\n```\n"
                "```text\nvllm serve m --attention-backend sdpa\n```\n", path="README.md"),
    ]
    INVALID = [
        Example(_PY + "llm = LLM(model='m', attention_backend='flash_attention_2')"),
        Example("from vllm.engine.arg_utils import AsyncEngineArgs\n"
                "args = AsyncEngineArgs(model='m', attention_config=dict(backend='sdpa'))"),
        Example("import os\nos.environ['VLLM_ATTENTION_BACKEND'] = 'FLASH_ATTENTION'"),
        Example(_PY + "llm = LLM(model='m', attention_backend='XFORMERS')", versions=(("vllm", "0.13.0"),)),
        Example("vllm serve m --attention-backend=XFORMERS\n", path="serve.sh", versions=(("vllm", "0.34.0"),)),
        Example("import subprocess\nsubprocess.run(['vllm', 'serve', 'm', '--attention-backend', 'fa3'])"),
        Example("FROM vllm/vllm-openai:latest\nENV VLLM_ATTENTION_BACKEND=FLASH_ATTN_V2\n", path="Dockerfile"),
        Example("## Serve\n\n```bash\nvllm serve Qwen/Qwen3-8B \\\n    --attention-backend FLASH_ATTN_3\n```\n",
                path="README.md"),
        # fixable: the same backend in another spelling (case, '-', the _VLLM_V1 suffix)
        Example("export VLLM_ATTENTION_BACKEND=FLASH_ATTN_VLLM_V1\nvllm serve m\n", path="serve.sh",
                versions=(("vllm", "0.13.0"),),
                fixed="export VLLM_ATTENTION_BACKEND=FLASH_ATTN\nvllm serve m\n"),
        # (a Python environment setting is reported at its key, not at the value: no fix)
        Example("import os\nos.environ['VLLM_ATTENTION_BACKEND'] = 'flashinfer'"),
        Example(_PY + "llm = LLM(model='m', attention_backend=\"flash-attn\")", versions=(("vllm", "0.13.0"),),
                fixed=_PY + "llm = LLM(model='m', attention_backend=\"FLASH_ATTN\")"),
        Example("```bash\nvllm serve m --attention-backend=triton_attn_vllm_v1\n```\n", path="README.md",
                versions=(("vllm", "0.34.0"),),
                fixed="```bash\nvllm serve m --attention-backend=TRITON_ATTN\n```\n"),
        Example(json.dumps({"cells": [{"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": None,
                                       "source": ["!vllm serve m --attention-backend fa3\n", "import os\n",
                                                  "os.environ['VLLM_ATTENTION_BACKEND'] = 'FLASH_ATTENTION'"]}],
                            "metadata": {}, "nbformat": 4, "nbformat_minor": 5}, indent=1),
                path="serve.ipynb", findings=2),
    ]

    def check_launch(self, launch, ctx):
        rel, note = target_release(ctx, "vllm", launch)
        for setting, via_env in backend_settings(launch):
            name = setting.text
            if rel is not None:
                wrong = not accepts(rel, name, via_env)
            else:
                judged = [r for r in choices.releases("vllm") if reads(r, via_env)]
                wrong = bool(judged) and not any(accepts(r, name, via_env) for r in judged)
            if wrong and choices.known_name(name):
                shown = rel or choices.newest("vllm", "attention_backend")
                rep = self.at(setting, name=name, hint=_unknown_hint(name, via_env, shown) + note,
                              valid_backends=", ".join(shown.choices("attention_backend")))
                judge = rel if rel is not None else judged[-1]
                fixed = same_backend(name, lambda c: reads(judge, via_env) and accepts(judge, c, via_env))
                if fixed:
                    rep.fix = value_fix(setting, fixed, f"Write the backend as vLLM names it: {fixed}")
                yield rep


@register
class VllmAttentionEnvNotRead(ConfigRule):
    """`VLLM_ATTENTION_BACKEND` (or `VLLM_FLASH_ATTN_VERSION`, `VLLM_USE_TRTLLM_ATTENTION`,
    `VLLM_USE_V1`) set for a vLLM release that does not read it: the attention variables are gone
    from 0.16 (0.14-0.15 were not read; the backend is then chosen automatically), `VLLM_USE_V1`
    from 0.12, when V1 became the only engine
    (it is read in 0.7.3-0.11.0 of the releases read). Releases from 0.17 warn about a VLLM_* variable
    they do not know; 0.12-0.16 ignore it silently (the hint says so). Fires only with a target vLLM
    version (configured, or read from the project: lint/pins.py)."""

    CODE = "EKB602"
    NAME = "vllm-attention-env-not-read"
    RECORDS = ("vllm-unknown-env-var-attention-backend",)
    TOOL = "vllm"
    PREFILTER = ((b"VLLM_ATTENTION_BACKEND",), (b"VLLM_FLASH_ATTN_VERSION",), (b"VLLM_USE_TRTLLM_ATTENTION",),
                 (b"VLLM_USE_V1",))
    _NEW = {"VLLM_ATTENTION_BACKEND": "use --attention-backend NAME (attention_backend='NAME' in Python)",
            "VLLM_FLASH_ATTN_VERSION": "use --attention-config.flash_attn_version N",
            "VLLM_USE_TRTLLM_ATTENTION": "use --attention-config.use_trtllm_attention true",
            "VLLM_USE_V1": "remove it (the V1 engine is the only engine; there is no V0 to switch to)"}
    VALID = [
        "import os\nos.environ['VLLM_ATTENTION_BACKEND'] = 'FLASHINFER'",
        Example("import os\nos.environ['VLLM_ATTENTION_BACKEND'] = 'FLASHINFER'", versions=(("vllm", "0.11.0"),)),
        Example("export VLLM_USE_V1=0\nvllm serve m\n", path="serve.sh", versions=(("vllm", "0.10.2"),)),
        Example("import os\nos.environ['VLLM_USE_V1'] = '1'"),  # no target version: not judged
    ]
    INVALID = [
        Example("import os\nos.environ['VLLM_ATTENTION_BACKEND'] = 'FLASHINFER'", versions=(("vllm", "0.30.0"),)),
        Example("services:\n  vllm:\n    image: vllm/vllm-openai:v0.30.0\n    environment:\n"
                "      - VLLM_ATTENTION_BACKEND=FLASHINFER\n      - VLLM_FLASH_ATTN_VERSION=2\n",
                path="compose.yaml", versions=(("vllm", "0.34.0"),), findings=2),
        Example("FROM vllm/vllm-openai:v0.20.0\nENV VLLM_USE_V1=1\n", path="Dockerfile", versions=(("vllm", "0.20.0"),)),
        Example("import os\nos.environ['VLLM_USE_V1'] = '0'\nfrom vllm import LLM", versions=(("vllm", "0.34.0"),)),
    ]

    def check_launch(self, launch, ctx):
        rel, note = target_release(ctx, "vllm", launch)
        if rel is None or rel.choices("env_vars") is None:
            return
        for name, setting in launch.env.items():
            if name in self._NEW and name not in rel.choices("env_vars"):
                read = choices.history("vllm", "env_vars", lambda r, n=name: n in (r.choices("env_vars") or ()))
                silent = "" if rel.value("warns_unknown_env", True) else \
                    " and ignores it without this warning (releases from 0.17 print it)"
                yield self.at(setting, env=name, hint=f"vllm {rel.version} does not read it ({read}){silent}; "
                                                      f"{self._NEW[name]}{note}")


@register
class VllmAttentionBackendFlagTooOld(ConfigRule):
    """`--attention-backend` on a command line for a vLLM release that has no such option (before
    0.13.0): argparse stops with 'unrecognized arguments'. Those releases read
    `VLLM_ATTENTION_BACKEND` instead. Fires only with a target vLLM version."""

    CODE = "EKB603"
    NAME = "vllm-attention-backend-flag-too-old"
    RECORDS = ("vllm-attention-backend-flag-unrecognized",)
    TOOL = "vllm"
    PREFILTER = ((b"attention-backend", b"vllm"),)
    VALID = [
        Example("vllm serve m --attention-backend FLASHINFER\n", path="serve.sh", versions=(("vllm", "0.13.0"),)),
        Example("vllm serve m --attention-backend FLASHINFER\n", path="serve.sh"),
    ]
    INVALID = [
        Example("VLLM_ATTENTION_BACKEND=X python -m vllm.entrypoints.openai.api_server --model m \\\n"
                "    --attention-backend FLASHINFER\n", path="serve.sh", versions=(("vllm", "0.11.0"),)),
    ]

    def check_launch(self, launch, ctx):
        rel, note = target_release(ctx, "vllm", launch)
        setting = launch.get("attention_backend")
        if launch.form != "cli" or rel is None or setting is None or rel.choices("engine_args") is None:
            return
        if "attention_backend" not in rel.choices("engine_args"):
            first = choices.history("vllm", "engine_args", lambda r: "attention_backend" in (r.choices("engine_args") or ()))
            after = f" {setting.text}" if setting.text else ""
            yield self.at(setting, before="", after=after,
                          hint=f"the option is {first.replace('accepted', 'present')}; on vllm {rel.version} "
                               f"set VLLM_ATTENTION_BACKEND={setting.text or 'NAME'} instead{note}")


# a deployment guide's shape (the tenth held-out round's DCU guide): the install, then the server
_GUIDE = ("# Serving on {gpu}\n\n```bash\n{install}\n```\n\n```bash\n"
          "vllm serve m --kv-cache-dtype fp8 --attention-backend TRITON_ATTN\n```\n")


@register
class VllmTritonFp8KvBeforeSm89(ConfigRule):
    """TRITON_ATTN with an FP8 KV cache (`kv_cache_dtype='fp8'`, `fp8_e4m3`, ...) on GPUs below
    compute capability 8.9 (A100, A10, RTX 30xx, T4, V100): Triton has no native FP8 there, and
    vLLM's Triton backend refuses the combination. TRITON_ATTN need not be named: on a V100 (sm70)
    it is the only backend a V1-only vLLM (0.12 and later) can pick, so a command line with an FP8
    KV cache and no backend fails there too (reported for sm70 with a target vLLM from 0.12)."""

    CODE = "EKB604"
    NAME = "vllm-triton-fp8-kv-before-sm89"
    RECORDS = ("vllm-triton-attn-fp8-kv-requires-sm89", "vllm-triton-fp8e4nv-kv-cache-unsupported-arch")
    TOOL = "vllm"
    ARCH_DEPENDENT = True
    PREFILTER = tuple((kv, b"fp8", name) for kv in (b"kv_cache_dtype", b"kv-cache-dtype")
                      for name in (b"TRITON_ATTN", b"triton_attn", b"vllm"))
    HINT = "auto/bfloat16 on {archs}, or another backend (FLASHINFER supports FP8 KV there)"
    HINT_PRE_AMPERE = "auto/float16 on {archs} (no bfloat16 below sm80)"
    # The first release read that has only the V1 engine (VLLM_USE_V1 is no longer read: choices.json).
    # On sm70 V1 picks from FLASH_ATTN (8.0+), FLASHINFER (7.5+), TRITON_ATTN and FLEX_ATTENTION, in
    # that order (vllm/platforms/cuda.py), so TRITON_ATTN serves; vllm-project/vllm#35720 shows
    # 0.16.0 doing so on a V100 with --kv-cache-dtype fp8. On sm75 FLASHINFER may take it instead.
    IMPLICIT_FROM = "0.12.0"
    VALID = [
        Example(_PY + "LLM(model='m', attention_backend='TRITON_ATTN', kv_cache_dtype='fp8')", archs=("sm90",)),
        _PY + "LLM(model='m', attention_backend='TRITON_ATTN', kv_cache_dtype='auto')",
        # no backend named: judged only on sm70, with a V1-only target, on a command line
        Example("vllm serve m --kv-cache-dtype fp8\n", path="run.sh", archs=("sm70",)),
        Example("vllm serve m --kv-cache-dtype fp8\n", path="run.sh", archs=("sm70",),
                versions=(("vllm", "0.11.0"),)),
        Example("vllm serve m --kv-cache-dtype fp8\n", path="run.sh", archs=("sm75",),
                versions=(("vllm", "0.16.0"),)),
        Example("vllm serve m --kv-cache-dtype fp8 --attention-backend $BACKEND\n", path="run.sh", archs=("sm70",),
                versions=(("vllm", "0.16.0"),)),
        Example(_PY + "LLM(model='m', kv_cache_dtype='fp8')", archs=("sm70",), versions=(("vllm", "0.16.0"),)),
        # a file that targets an AMD ROCm GPU or a Hygon DCU is not judged by CUDA's compute capability
        # (the tenth held-out round's DCU guide; lint/archs.py NON_NVIDIA_EVIDENCE)
        Example(_GUIDE.format(gpu="Hygon DCU BW10 (gfx936)",
                              install="pip install vllm-0.23.0+das.dtk2604-cp310-cp310-linux_x86_64.whl"),
                path="guide.md"),
        Example("export HIP_VISIBLE_DEVICES=0,1\nvllm serve m --attention-backend TRITON_ATTN --kv-cache-dtype fp8\n",
                path="serve.sh"),
    ]
    INVALID = [
        Example(_PY + "LLM(model='m', attention_backend='TRITON_ATTN', kv_cache_dtype='fp8')", archs=("sm80", "sm90")),
        # the same guide for an NVIDIA GPU
        Example(_GUIDE.format(gpu="NVIDIA A100 (CUDA 12.4)", install="pip install vllm==0.23.0"), path="guide.md"),
        Example("vllm serve m --attention-backend triton_attn --kv-cache-dtype fp8_e4m3\n", path="run.sh",
                archs=("sm86",)),
        Example("vllm serve m --kv-cache-dtype fp8\n", path="run.sh", archs=("sm70",),
                versions=(("vllm", "0.16.0"),)),
        # the official image runs the OpenAI server: what follows the image is its options (and the tag its version)
        Example("docker run --gpus=all -p 8000:8000 vllm/vllm-openai:v0.16.0 \\\n    --model m --kv-cache-dtype fp8\n",
                path="run.sh", archs=("sm70",)),
    ]

    def check_launch(self, launch, ctx):
        kv = launch.get("kv_cache_dtype")
        if kv is None or not (kv.text or "").startswith("fp8"):
            return
        backends = [s.text.upper().removesuffix("_VLLM_V1") for s, _ in backend_settings(launch)]
        old = [a for a in ctx.archs if (arch_major(a), int(a[2:]) % 10) < (8, 9)]
        if "TRITON_ATTN" in backends and old:
            yield self._report(kv, old)
            return
        note = self._triton_by_default(launch, ctx)
        if note is not None:
            yield self._report(kv, ["sm70"], f"; no backend is named, and TRITON_ATTN is the only one vLLM "
                                             f"{self.IMPLICIT_FROM}+ can pick on sm70{note}")

    def _triton_by_default(self, launch, ctx) -> str | None:
        """The hint's target note when no backend is set anywhere on a command line, sm70 is
        targeted and the target vLLM is V1-only; None otherwise."""
        if launch.form != "cli" or "sm70" not in ctx.archs or _ENV in launch.env \
                or any(k in launch.settings for k in (*_BACKEND_KEYS, "attention_config")):
            return None
        rel, note = target_release(ctx, "vllm", launch)
        version = target_version(ctx, "vllm", launch)
        if rel is None or choices.version_key(version) < choices.version_key(self.IMPLICIT_FROM):
            return None
        return note

    def _report(self, kv, old, extra: str = ""):
        major = arch_major(old[0])
        cap = f"{major}.{int(old[0][2:]) % 10}"
        pre = [a for a in old if arch_major(a) < 8]  # no bfloat16 there (and no FlashInfer on sm70)
        ampere = [a for a in old if a not in pre]
        parts = ([self.HINT_PRE_AMPERE.format(archs=", ".join(pre))] if pre else []) + \
            ([self.HINT.format(archs=", ".join(ampere))] if ampere else [])
        return self.at(kv, dev=f"an {old[0]} GPU", cap_str=cap, suggested="float16" if major < 8 else "bfloat16",
                       hint="use --kv-cache-dtype " + "; ".join(parts) + extra)


@register
class VllmBfloat16BeforeSm80(ConfigRule):
    """`dtype='bfloat16'` (`--dtype bfloat16`) for GPUs below compute capability 8.0 (V100, T4,
    RTX 20xx): vLLM refuses the model dtype at start-up, in every release read (0.2.0-0.34.0,
    record `vllm-bf16-requires-sm80`); float16 is what those GPUs run. `auto` is left alone: from
    vLLM 0.9.0 it falls back to float16 on GPUs without bfloat16 (with a warning), while up to
    0.8.5 it keeps a bfloat16 checkpoint's dtype and fails the same way, but whether the checkpoint
    is bfloat16 is not in the code the linter reads. Fires only when the target archs include
    sm70/sm75: the default list starts at sm80."""

    CODE = "EKB605"
    NAME = "vllm-bfloat16-before-sm80"
    RECORDS = ("vllm-bf16-requires-sm80",)
    TOOL = "vllm"
    ARCH_DEPENDENT = True
    PREFILTER = ((b"dtype", b"bfloat16", b"vllm"),)
    VALID = [
        _PY + "LLM(model='m', dtype='bfloat16')",
        Example(_PY + "LLM(model='m', dtype='float16')", archs=("sm75",)),
        Example(_PY + "LLM(model='m', dtype='auto')", archs=("sm70",)),
        Example("vllm serve m --dtype bfloat16\n", path="run.sh", archs=("sm80", "sm90")),
        Example("vllm serve m --kv-cache-dtype bfloat16 --dtype half\n", path="run.sh", archs=("sm75",)),
    ]
    INVALID = [
        Example(_PY + "LLM(model='m', dtype='bfloat16')", archs=("sm75",)),
        Example("vllm serve m --dtype bfloat16\n", path="run.sh", archs=("sm70", "sm80")),
        Example("python -m vllm.entrypoints.openai.api_server --model m --dtype=bfloat16\n", path="run.sh",
                archs=("sm70",)),
    ]

    def check_launch(self, launch, ctx):
        setting = launch.get("dtype")
        if setting is None or (setting.text or "").lower() != "bfloat16":
            return
        old = [a for a in ctx.archs if arch_major(a) < 8]
        if old:
            cap = f"{arch_major(old[0])}.{int(old[0][2:]) % 10}"
            yield self.at(setting, gpu_name=f"{old[0]}", compute_str=f"has compute capability {cap}",
                          hint=f"use --dtype float16 (dtype='half') for {', '.join(old)}")
