"""SGLang launch configuration: `--attention-backend` and friends (`sglang.Engine(...)`,
`ServerArgs(...)`, `python -m sglang.launch_server`, `sglang serve`) against the names each release
accepts (data/lint/choices.json) and against the target GPUs."""

from __future__ import annotations

import difflib
import json

from errkb.lint import choices
from errkb.lint.launch import ConfigRule, target_release, value_fix
from errkb.lint.rule import Example, arch_major, register

# setting -> (the choices table it is checked against, how argparse names the option)
BACKEND_KEYS = {
    "attention_backend": ("attention_backend", ""),
    "prefill_attention_backend": ("attention_backend", "prefill-"),
    "decode_attention_backend": ("attention_backend", "decode-"),
    "mm_attention_backend": ("mm_attention_backend", "mm-"),
}
_LM_KEYS = ("attention_backend", "prefill_attention_backend", "decode_attention_backend")
_PY = "import sglang as sgl\n"
# the byte prefilter: a launch spells its constructor or launcher and the option (SGLang's own tree
# mentions attention_backend in hundreds of files that launch nothing)
LAUNCH_PREFILTER = ((b"ServerArgs(", b"attention_backend"), (b"Engine(", b"attention_backend"),
                    (b"launch_server", b"attention-backend"), (b"serve", b"attention-backend"),
                    (b"one_batch", b"attention-backend"),
                    (b".sglang.", b"attention_backend"), (b"--sglang-", b"attention-backend"),  # frameworks
                    (b"sglang:", b"attention_backend"),  # frameworks' YAML sections (training_configs)
                    # AReaL's top-level overrides, `sglang.attention_backend=fa3`, have no dot before sglang
                    (b"sglang.attention_backend",), (b"sglang.mm_attention_backend",),
                    (b"sglang.prefill_attention_backend",), (b"sglang.decode_attention_backend",))
_SH = "python -m sglang.launch_server --model-path Qwen/Qwen2.5-7B-Instruct"


def _notebook(*lines: str) -> str:
    return json.dumps({"cells": [{"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": None,
                                  "source": list(lines)}], "metadata": {}, "nbformat": 4, "nbformat_minor": 5},
                      indent=1)


def _launch_with(*words: bytes) -> tuple[tuple[bytes, ...], ...]:
    """The launch prefilter, each group also needing `words`."""
    return tuple(g + words for g in LAUNCH_PREFILTER)


@register
class SglangUnknownAttentionBackend(ConfigRule):
    """An SGLang attention backend name (`--attention-backend`, `--prefill-/--decode-attention-backend`,
    `--mm-attention-backend`, or the same keyword of `sglang.Engine`/`ServerArgs`) that the release
    does not offer: vLLM's or transformers' names (FLASHINFER, sdpa, flash_attention_2), SGLang
    Diffusion's names (torch_sdpa), or a name newer than the installed release (fa4 before 0.5.3, dsa
    before 0.5.16). Without a target SGLang version only names no release accepts are reported. A
    name far from every backend name SGLang, vLLM or transformers ever had (choices.known_name) is
    taken for a fork's own backend and not judged."""

    CODE = "EKB701"
    NAME = "sglang-unknown-attention-backend"
    RECORDS = ("sglang-attention-backend-invalid-choice",)
    TOOL = "sglang"
    PREFILTER = LAUNCH_PREFILTER
    VALID = [
        _PY + "engine = sgl.Engine(model_path='m', attention_backend='fa4')",
        _PY + "engine = sgl.Engine(model_path='m', attention_backend='nsa')",
        Example(_SH + " --attention-backend triton --mm-attention-backend fa3\n", path="serve.sh"),
        Example(_SH + " --attention-backend fa3\n", path="serve.sh", versions=(("sglang", "0.4.6.post5"),)),
        # triage (SGLang 0.5.23 multimodal_gen tests): `sglang serve` may start the diffusion server
        "import subprocess\nsubprocess.Popen(['sglang', 'serve', '--model-path', p, '--attention-backend', 'fa'])",
        # held-out triage (a fork's README puts its own SGLang tree first on PYTHONPATH)
        Example(_SH + " --prefill-attention-backend flashprefill --decode-attention-backend triton\n",
                path="serve.sh"),
        # the twenty-fourth held-out round: a fork's three-letter backend, one letter from nsa and qsa
        Example("python3 run.py --sglang-attention-backend hsa\n", path="eval.sh"),
    ]
    INVALID = [
        Example(_PY + "engine = sgl.Engine(model_path='m', attention_backend='torch_sdpa')"),
        Example("from sglang.srt.server_args import ServerArgs\n"
                "args = ServerArgs(model_path='m', decode_attention_backend='FLASHINFER')"),
        Example(_SH + " --attention-backend fa4\n", path="serve.sh", versions=(("sglang", "0.5.1"),)),
        Example(_SH + " --attention-backend fa2\n", path="serve.sh"),  # one letter from fa3/fa4
        Example("apiVersion: apps/v1\nkind: Deployment\nspec:\n  template:\n    spec:\n      containers:\n"
                "        - name: sglang\n          command: [\"python3\", \"-m\", \"sglang.launch_server\"]\n"
                "          args: [\"--model-path\", \"m\", \"--attention-backend\", \"flash_attention_2\"]\n",
                path="deploy.yaml"),
    ]

    def check_launch(self, launch, ctx):
        if launch.entry == "sglang serve":
            # `sglang serve` starts SGLang Diffusion for a diffusion model, whose backend names
            # differ (fa, torch_sdpa, sage_attn) and are free text from 0.5.10: only the model decides
            return
        rel, note = target_release(ctx, "sglang", launch)
        for key, setting in launch.texts(*BACKEND_KEYS):
            fact, which = BACKEND_KEYS[key]
            name = setting.text
            if rel is not None:
                names = rel.choices(fact)
                wrong = names is not None and name not in names
            else:
                wrong = not any(name in (r.choices(fact) or ()) for r in choices.releases("sglang")) \
                    and any(r.choices(fact) for r in choices.releases("sglang"))
            if not wrong or not choices.known_name(name):
                continue
            shown = rel if rel is not None and rel.choices(fact) else choices.newest("sglang", fact)
            ever = choices.history("sglang", fact, lambda r: name in (r.choices(fact) or ()))
            close = difflib.get_close_matches(name.lower(), shown.choices(fact), n=2)
            hint = f"{name!r} is {ever}" + (f"; did you mean {' or '.join(close)}?" if close else "") + note
            yield self.at(setting, which=which, choice=repr(name), hint=hint,
                          choices=", ".join(repr(c) for c in shown.choices(fact)))


@register
class SglangNsaRenamedDsa(ConfigRule):
    """`attention_backend='nsa'` on an SGLang release where it is a deprecated alias of 'dsa'
    (0.5.16 and later in the releases read). Fires only with a target SGLang version, because 'dsa'
    does not exist before 0.5.16."""

    CODE = "EKB702"
    NAME = "sglang-nsa-renamed-dsa"
    RECORDS = ("sglang-nsa-backend-renamed-dsa",)
    FIXES = {"sglang-nsa-backend-renamed-dsa": 1}  # "Use the new name": the same backend, safe
    TOOL = "sglang"
    PREFILTER = _launch_with(b"nsa")
    VALID = [
        Example(_SH + " --attention-backend nsa\n", path="serve.sh", versions=(("sglang", "0.5.10"),)),
        Example(_SH + " --attention-backend nsa\n", path="serve.sh"),
    ]
    INVALID = [Example(_SH + " --attention-backend nsa\n", path="serve.sh", versions=(("sglang", "0.5.23"),),
                       fixed=_SH + " --attention-backend dsa\n"),
               Example(_PY + "sgl.Engine(model_path='m', prefill_attention_backend='nsa')",
                       versions=(("sglang", "0.5.16"),),
                       fixed=_PY + "sgl.Engine(model_path='m', prefill_attention_backend='dsa')"),
               Example(_SH + " --attention-backend=nsa --decode-attention-backend 'nsa'\n", path="serve.sh",
                       versions=(("sglang", "0.5.23"),), findings=2,
                       fixed=_SH + " --attention-backend=dsa --decode-attention-backend 'dsa'\n"),
               Example("args:\n  - --attention-backend\n  - \"nsa\"\nimage: lmsysorg/sglang:v0.5.23\n"
                       "command: [python3, -m, sglang.launch_server]\n", path="deploy.yaml",
                       fixed="args:\n  - --attention-backend\n  - \"dsa\"\nimage: lmsysorg/sglang:v0.5.23\n"
                             "command: [python3, -m, sglang.launch_server]\n"),
               Example(_notebook("!" + _SH + " --attention-backend nsa\n"), path="serve.ipynb",
                       versions=(("sglang", "0.5.23"),), fixed=_notebook("!" + _SH + " --attention-backend dsa\n")),
               Example("```bash\n" + _SH + " \\\n  --attention-backend nsa\n```\n", path="README.md",
                       versions=(("sglang", "0.5.23"),),
                       fixed="```bash\n" + _SH + " \\\n  --attention-backend dsa\n```\n")]

    def check_launch(self, launch, ctx):
        rel, note = target_release(ctx, "sglang", launch)
        if rel is None or rel.mapping("deprecated_aliases").get("nsa") != "dsa":
            return
        for _, setting in launch.texts(*_LM_KEYS):
            if setting.text == "nsa":
                rep = self.at(setting, hint=f"use 'dsa' (the same backend; 'nsa' is deprecated in sglang {rel.version})"
                                            + note)
                rep.fix = value_fix(setting, "dsa", "Use 'dsa', the new name of the same backend")
                yield rep


def _refused_on(rule, launch, ctx, keys, name, refused):
    """Each setting of backend `name` under `keys`, when the target archs include some that
    `refused(major)` rules out; the hint names those archs."""
    bad = [a for a in ctx.archs if refused(arch_major(a))]
    if bad:
        for setting in _backends(launch, keys, name):
            yield rule.at(setting, hint=rule.HINT.format(archs=", ".join(bad)))


def _backends(launch, keys, name):
    """The settings of `keys` that name backend `name`; `attention_backend` only where a phase
    still falls back to it: SGLang builds each phase from --prefill-/--decode-attention-backend
    when that is given, else from --attention-backend (`get_attention_backends` in 0.5.6,
    `attention_backends_of` in 0.5.23), so with both given it builds nothing from it."""
    both = all(launch.settings.get(k) is not None and launch.settings[k].value is not None
               for k in ("prefill_attention_backend", "decode_attention_backend"))
    return [s for k, s in launch.texts(*keys) if s.text == name and not (both and k == "attention_backend")]


# a deployment guide that names its GPU (the eleventh held-out round's SGLang guide, on 8x H200):
# judged for the archs of the GPUs it names, not the configured ones (lint/archs.py GPU_NAMES)
_GUIDE = ("# Serving on {gpu}\n\nThe model needs two nodes of 8x {gpu}.\n\n```bash\n"
          "python3 -m sglang.launch_server --model-path m --tp 16 {flags}\n```\n")


@register
class SglangFa3ArchRange(ConfigRule):
    """The fa3 attention backend on a GPU outside compute capability 8.x/9.x: SGLang refuses it
    at startup on Blackwell (10.x, 11.x, 12.x), where FA3's kernels do not run."""

    CODE = "EKB703"
    NAME = "sglang-fa3-backend-arch"
    RECORDS = ("sglang-fa3-backend-requires-sm80-sm90",)
    TOOL = "sglang"
    ARCH_DEPENDENT = True
    PREFILTER = _launch_with(b"fa3")
    HINT = "fa3 cannot run on {archs}: use fa4, trtllm_mha/trtllm_mla, flashinfer or triton there"
    VALID = [Example(_PY + "sgl.Engine(model_path='m', attention_backend='fa3')", archs=("sm80", "sm90")),
             Example(_GUIDE.format(gpu="H200", flags="--attention-backend fa3"), path="guide.md"),
             # names a Hopper and a Blackwell GPU: fa3 holds on one of them (the twelfth held-out round)
             Example(_GUIDE.format(gpu="H100 (fa3) or B200 (trtllm_mha)", flags="--attention-backend fa3"),
                     path="guide.md"),
             # both phases name their own backend: --attention-backend fa3 builds nothing
             Example(_SH + " --attention-backend fa3 --prefill-attention-backend triton "
                     "--decode-attention-backend flashinfer\n", path="serve.sh", archs=("sm100",)),
             # an array set again before the launch: its last words count
             Example("ARGS=(--attention-backend fa3)\nARGS=(--attention-backend triton)\n"
                     'python -m sglang.launch_server --model-path m "${ARGS[@]}"\n', path="serve.sh", archs=("sm100",)),
             # a variable set in two branches (or by a loop, or from another variable) has no one value
             Example('if [ "$GPU" = h100 ]; then B=fa3; else B=triton; fi\n'
                     "python -m sglang.launch_server --model-path m --attention-backend $B\n", path="serve.sh",
                     archs=("sm100",)),
             Example('B="${B:-fa3}"\npython -m sglang.launch_server --model-path m --attention-backend "$B"\n',
                     path="serve.sh", archs=("sm100",)),
             # an assignment before the command is its environment, not the shell's $B
             Example("B=fa3 python -m sglang.launch_server --model-path m --attention-backend $B\n", path="serve.sh",
                     archs=("sm100",)),
             # a script for Hygon HCUs or Kunlun XPUs (the twenty-third round): NVIDIA archs mean nothing there
             Example("# on eight HCU devices\npython3 train.py --sglang-attention-backend fa3\n", path="train.sh"),
             Example("export XMLIR_ENABLE_FAST_FC=1\npython3 train.py --sglang-mm-attention-backend fa3\n",
                     path="train.sh"),
             # a script for Hygon DCUs that says so only in names (USE_DCU_*, dcu_megatron; round 25)
             Example("export USE_DCU_CUSTOM_ALLREDUCE=1\nB=fa3\n"
                     "python3 -m areal.launcher.local train.py +sglang.attention_backend=$B\n", path="train.sh",
                     archs=("sm100",)),
             # a framework override from a variable is known only at run time
             Example("python3 -m verl.trainer.main_ppo +sglang.attention_backend=${SGLANG_ATTENTION_BACKEND}\n",
                     path="train.sh", archs=("sm100",)),
             # the key written last wins: the spread dict's fa3 is replaced
             Example(_PY + "config = dict(model_path='m', attention_backend='fa3')\n"
                     "sgl.Engine(**{**config, 'attention_backend': 'triton'})\n", archs=("sm100",)),
             # an engine section's interpolated or null value is not known here
             Example("sglang:\n  attention_backend: ${rollout.backend}\n", path="grpo.yaml", archs=("sm100",)),
             Example("engine_kwargs:\n  sglang:\n    attention_backend: null\n", path="ppo.yaml", archs=("sm100",)),
             # a test checking what a launcher holds runs nothing (the twenty-fifth round)
             Example("def test_launcher(launcher):\n    assert '--sglang-attention-backend fa3' in launcher\n",
                     archs=("sm100",)),
             Example("import unittest\n\n\nclass T(unittest.TestCase):\n    def test_cmd(self):\n"
                     "        self.assertEqual(build(), ['python3', '-m', 'sglang.launch_server', "
                     "'--attention-backend', 'fa3'])\n", archs=("sm100",)),
             # a module-level list bound twice has no one value to join on
             Example("FLAGS = ['--attention-backend', 'fa3']\nFLAGS = ['--attention-backend', 'triton']\n"
                     "CMD = ['python3', '-m', 'sglang.launch_server'] + FLAGS\n", archs=("sm100",))]
    INVALID = [
        Example(_PY + "sgl.Engine(model_path='m', attention_backend='fa3')", archs=("sm90", "sm100")),
        Example(_GUIDE.format(gpu="B200", flags="--attention-backend fa3"), path="guide.md"),
        Example(_GUIDE.format(gpu="B200 or RTX 5090", flags="--attention-backend fa3"), path="guide.md"),
        # both phases set: the finding is on the phase that builds fa3, not on --attention-backend
        # (the thirteenth held-out round), and a launcher through a variable is a launch too
        Example('exec "${PYTHON_BIN}" -m sglang.launch_server --model-path m --attention-backend fa3 '
                "--prefill-attention-backend fa3 --decode-attention-backend triton\n", path="serve.sh", archs=("sm100",)),
        # SGLang's one-batch benchmark takes the server's options and builds the same backends (the
        # fourteenth and fifteenth rounds' misses)
        Example('SRV=(--prefill-attention-backend fa3 --decode-attention-backend triton)\n'
                'base=(python -m sglang.bench_one_batch --model-path m "${SRV[@]}" --batch-size 1)\n'
                'nsys profile "${base[@]}"\n', path="profile.sh", archs=("sm100",)),
        # options collected in a bash array and spliced into the launch (the fourteenth round's misses)
        Example("ARGS=(\n  --model-path m  # the model\n  --prefill-attention-backend fa3\n)\n"
                'python -m sglang.launch_server "${ARGS[@]}"\n', path="serve.sh", archs=("sm100",)),
        # a framework passing SGLang's engine arguments on: verl's and AReaL's Hydra overrides,
        # slime's prefixed flags (the twenty-second round's files were the first two)
        Example("python3 -m verl.trainer.main_ppo actor_rollout_ref.rollout.name=sglang \\\n"
                "    +actor_rollout_ref.rollout.engine_kwargs.sglang.attention_backend=fa3\n", path="train.sh",
                archs=("sm100",)),
        Example("python3 -m areal.launcher.local gsm8k_grpo.py actor.sglang.attention_backend=fa3\n",
                path="train.sh", archs=("sm120",)),
        Example("python3 train.py --sglang-attention-backend fa3 --sglang-mem-fraction-static 0.7\n",
                path="train.sh", archs=("sm100",)),
        # slime's options in Python: string pieces of a training command, an argv list (the twenty-third round)
        Example('TRAIN_ARGS = (\n    "--actor-num-nodes 1 "\n    "--sglang-attention-backend fa3 "\n)\n', archs=("sm100",)),
        Example('import subprocess\n\ndef run():\n    subprocess.run(["python3", "train.py", '
                '"--sglang-attention-backend", "fa3"])\n', archs=("sm100",)),
        # a script whose last line continues with a backslash and no line after it still runs (the
        # twenty-third round's verl script)
        Example("A=(\n  +x.engine_kwargs.sglang.attention_backend=fa3\n)\n"
                "python3 -m verl.trainer.main_ppo \\\n    ${A[@]} \\", path="train.sh", archs=("sm100",)),
        # options, or one backend, held in a shell variable set once and expanded in the launch
        # (the eighteenth round's misses were of this form)
        Example('OPTS="--attention-backend fa3 --page-size 16"\n'
                "python -m sglang.launch_server --model-path m $OPTS\n", path="serve.sh", archs=("sm100",)),
        Example("export BACKEND=fa3\n"
                'python -m sglang.launch_server --model-path m --attention-backend "${BACKEND}"\n', path="serve.sh",
                archs=("sm100",)),
        # a subclass of Engine takes Engine's settings, here from a dict spread into another (the
        # twelfth round's miss)
        Example(_PY + "class StageEngine(sgl.Engine):\n    run_scheduler_process_func = None\n\n"
                "config = dict(model_path='m', attention_backend='fa3')\nStageEngine(**{**config, 'port': 1})\n",
                archs=("sm100",)),
        # a launcher list that starts with the running interpreter
        Example("import subprocess, sys\nsubprocess.Popen([sys.executable, '-m', 'sglang.launch_server', "
                "'--model-path', 'm', '--attention-backend', 'fa3'])", archs=("sm100",)),
        # a command run for its exit status (a comparison around the call, not around the list)
        Example("import subprocess\nif subprocess.call(['python3', '-m', 'sglang.launch_server', "
                "'--attention-backend', 'fa3']) != 0:\n    raise SystemExit(1)\n", archs=("sm100",)),
        # AReaL's top-level override of a variable set once (its prefilter needed a dot before sglang)
        Example("B=fa3\npython3 -m areal.launcher.local train.py +sglang.attention_backend=$B\n", path="train.sh",
                archs=("sm100",)),
        # RL frameworks' YAML sections of engine arguments: verl's engine_kwargs.sglang, AReaL's sglang
        Example("actor_rollout_ref:\n  rollout:\n    name: sglang\n    engine_kwargs:\n      sglang:\n"
                "        attention_backend: fa3\n", path="ppo.yaml", archs=("sm100",)),
        Example("sglang:\n  model_path: ${actor.path}\n  attention_backend: fa3\n", path="grpo.yaml", archs=("sm120",)),
        # flags kept in a module-level list and joined on with `+` or spliced with `*` (the
        # fourteenth round's misses)
        Example("import subprocess\nFLAGS = ['--tp', '1', '--attention-backend', 'fa3']\n\n\ndef cmd():\n"
                "    return ['python3', '-m', 'sglang.launch_server', '--model-path', 'm'] + FLAGS\n",
                archs=("sm100",)),
        Example("import subprocess\nBASE = ('python3', '-m', 'sglang.launch_server')\n\n\ndef start():\n"
                "    subprocess.Popen([*BASE, '--attention-backend', 'fa3'])\n", archs=("sm120",)),
        Example(_GUIDE.format(gpu="RTX 5090", flags="--attention-backend fa3"), path="guide.md"),
        Example(_GUIDE.format(gpu="GPUs", flags="--attention-backend fa3"), path="guide.md"),  # no GPU named: the defaults
        Example("FROM lmsysorg/sglang:latest\n"
                "CMD [\"python3\", \"-m\", \"sglang.launch_server\", \"--model-path\", \"m\", \"--decode-attention-backend\", \"fa3\"]\n",
                path="Dockerfile", archs=("sm120",)),
    ]

    def check_launch(self, launch, ctx):
        yield from _refused_on(self, launch, ctx, _LM_KEYS, "fa3", lambda major: major not in (8, 9))


@register
class SglangHpcOpsSpeculative(ConfigRule):
    """The hpc_ops attention backend together with speculative decoding: the backend has no
    draft or verify path, so SGLang refuses to create it."""

    CODE = "EKB704"
    NAME = "sglang-hpc-ops-speculative"
    RECORDS = ("sglang-hpc-ops-no-speculative-decoding",)
    TOOL = "sglang"
    PREFILTER = _launch_with(b"hpc_ops", b"speculative")
    HINT = "drop --speculative-algorithm, or use another attention backend (fa3, flashinfer) with it"
    VALID = [Example(_SH + " --attention-backend hpc_ops --page-size 64\n", path="serve.sh")]
    INVALID = [Example(_SH + " --attention-backend hpc_ops --page-size 64 --speculative-algorithm EAGLE3\n",
                       path="serve.sh")]

    def check_launch(self, launch, ctx):
        spec = launch.get("speculative_algorithm")
        if spec is None or spec.value is None or spec.value is False:
            return
        for setting in _backends(launch, _LM_KEYS, "hpc_ops"):
            yield self.at(setting)


@register
class SglangVisionFa3Blackwell(ConfigRule):
    """`--mm-attention-backend fa3` (the vision tower's attention) on Blackwell GPUs (10.x, 11.x,
    12.x), where SGLang refuses FA3 when it builds the model."""

    CODE = "EKB705"
    NAME = "sglang-vision-fa3-blackwell"
    RECORDS = ("sglang-vision-fa3-not-on-blackwell",)
    TOOL = "sglang"
    ARCH_DEPENDENT = True
    PREFILTER = _launch_with(b"fa3")
    HINT = "use --mm-attention-backend fa4 (or triton_attn/sdpa) on {archs}"
    VALID = [Example(_SH + " --mm-attention-backend fa3\n", path="serve.sh", archs=("sm90",)),
             Example(_GUIDE.format(gpu="H200", flags="--mm-attention-backend fa3"), path="guide.md")]
    INVALID = [Example(_SH + " --mm-attention-backend fa3\n", path="serve.sh", archs=("sm90", "sm100")),
               Example(_GUIDE.format(gpu="GB200", flags="--mm-attention-backend fa3"), path="guide.md")]

    def check_launch(self, launch, ctx):
        yield from _refused_on(self, launch, ctx, ("mm_attention_backend",), "fa3", lambda major: major >= 10)
