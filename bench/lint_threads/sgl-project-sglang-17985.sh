# source: https://github.com/sgl-project/sglang/pull/17985 (first post), query 5, rank 5 (read through the title follow-up)
# the excerpt cuts the command inside the model path (partial word "/mnt/seed17/001688/models" dropped).
python -m sglang.launch_server \
 --model-path
