# source: https://github.com/sgl-project/sglang/issues/12360 (first post, "Reproduction"), query 8, rank 9
python3 -m sglang.launch_server \
    --model-path Qwen/Qwen3-VL-4B-Instruct \
    --host 0.0.0.0 \
    --port 8000
