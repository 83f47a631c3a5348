# source: https://github.com/sgl-project/sglang/issues/6342 (first post), query 5, rank 7
# copied verbatim (inline-code backquote not copied); the excerpt cuts it at "--speculative-algo=EAG"
# (partial word dropped), before the options that follow.
python3 -m sglang.launch_server \
    --model-path=/model_repo/DeepSeek-V3 \
    --host=127.0.0.1 \
    --port=11173 \
    --watchdog-timeout=600 \
    --trust-remote-code \
    --allow-auto-truncate \
    --context-length=65536 \
    --max-prefill-tokens=65536 \
    --mem-fraction-static=0.80 \
    --enable-torch-compile \
    --tp=16 \
    --nnodes=2 \
    --node-rank=0 \
    --max-running-requests=256 \
