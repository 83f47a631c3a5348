# source: https://github.com/sgl-project/sglang/issues/7883 (first post), query 5, rank 1
# copied verbatim (the log lines that follow it are not copied).
python -m sglang.launch_server --model-path /home/zigzagcai/downloaded_huggingface/models--Qwen--Qwen3-8B/snapshots/2069b3fae1114555f3c020c81410e51fa0f656f2
