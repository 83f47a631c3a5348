# source: https://github.com/HYGON-AI/inference-cookbook-das/issues/28 (first post), query 5, rank 2
# copied verbatim: the default command, then the same with the backend the reporter added.
python -m sglang.launch_server --model-path data/models/Qwen3-8B --tp-size 1 --trust-remote-code --mem-fraction-static 0.85
python -m sglang.launch_server --model-path data/models/Qwen3-8B --tp-size 1 --trust-remote-code --mem-fraction-static 0.85 --attention-backend fa3
