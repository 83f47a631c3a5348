# source: https://github.com/sgl-project/sglang/pull/22039 (first post), query 5, rank 4 (read through the title follow-up)
# the excerpt cuts the command at "--trust-re" (partial word dropped).
python -m sglang.launch_server \
 --model-path /mnt/seed17/001688/models/Qwen3-4B/ \
