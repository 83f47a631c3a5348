# source: https://github.com/sgl-project/sglang/issues/18729 (first post), query 6, rank 5
# copied verbatim without the shell prompt (the log lines that follow it are not copied).
python3 -m sglang.launch_server --model Qwen/Qwen3-30B-A3B --tp-size 4 --port 30000 --attention-backend flashinfer --enable-flashinfer-allreduce-fusion
