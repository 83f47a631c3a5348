# source: https://github.com/sgl-project/sglang/issues/565 (first post), query 6, rank 6
python -m sglang.launch_server --model-path /mnt/ebs_volume/models/llama/llama-3-8b-instruct --tp-size=4 --mem-fraction-static=0.75 --port 30000 --enable-flashinfer
