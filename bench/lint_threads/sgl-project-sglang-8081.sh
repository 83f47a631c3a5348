# source: https://github.com/sgl-project/sglang/issues/8081 (first post), query 5, rank 3
# copied verbatim without the "$ " prompt; the line break inside the path is the excerpt's.
python3 -m sglang.launch_server --trust-remote-code --model-path /home/jobuser/.cache/huggingface/hub/models--google--gemma-3n-E2B-it/snapshots/5e092ebca197cdcd8d8
b195040accf22693501bc/
